#include "daemon/service/proto_text.h"

#include <google/protobuf/descriptor.h>

#include "common/utf8.h"

namespace gpuctl::daemon {

void MakeStringsUtf8(google::protobuf::Message& message) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);  // only fields that are set
  for (const FieldDescriptor* field : fields) {
    if (field->type() == FieldDescriptor::TYPE_STRING) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          std::string text = reflection->GetRepeatedString(message, field, i);
          if (!IsValidUtf8(text)) reflection->SetRepeatedString(&message, field, i, SanitizeUtf8(text));
        }
      } else {
        std::string text = reflection->GetString(message, field);
        if (!IsValidUtf8(text)) reflection->SetString(&message, field, SanitizeUtf8(text));
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      // Map fields are repeated entry messages here: keys and values alike.
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          MakeStringsUtf8(*reflection->MutableRepeatedMessage(&message, field, i));
        }
      } else {
        MakeStringsUtf8(*reflection->MutableMessage(&message, field));
      }
    }
  }
}

}  // namespace gpuctl::daemon
