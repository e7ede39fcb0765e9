// The compiled module of the proof extension: it says which kernels it was
// built with. Python's C API only, so this file compiles in seconds; the
// memory goes to the flash-attn kernels beside it.
#include <Python.h>

static PyObject* Kernels(PyObject*, PyObject*) {
  return PyUnicode_FromString("flash-attn 2.8.3 fwd hdim32 fp16, sm_80");
}

static PyMethodDef kMethods[] = {{"kernels", Kernels, METH_NOARGS, "The kernels built in."}, {nullptr, nullptr, 0, nullptr}};

static PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "gpuctl_proof_ext._C",
                              "flash-attn kernels built under gpuctl's governor", -1, kMethods};

PyMODINIT_FUNC PyInit__C() { return PyModule_Create(&kModule); }
