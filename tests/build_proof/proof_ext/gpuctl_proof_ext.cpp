// The module of the proof extension: importable, and it says which kernels
// it was built with. Python's C API only, so this file compiles in seconds;
// the memory goes to the flash-attn kernels beside it.
#include <Python.h>

static PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "gpuctl_proof_ext",
                              "flash-attn 2.8.3 fwd hdim32 kernels, built under gpuctl's governor", -1, nullptr};

PyMODINIT_FUNC PyInit_gpuctl_proof_ext() {
  PyObject* module = PyModule_Create(&kModule);
  if (module != nullptr) PyModule_AddStringConstant(module, "__version__", "1.0");
  return module;
}
