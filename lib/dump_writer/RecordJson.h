// Internal: one forward API record in dump.json's entry format, as DumpWriter writes it, for the header of an
// online pre-check frame (probe/online_client.h): the same encoder, so a call sent online and the same call
// dumped are described alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "probe/dump.h"
#include "probe/runner.h"
#include "probe/tensor.h"
#include "probe/value.h"

namespace probe::dump_writer {

/// `"key": {input_args, input_kwargs, output}` with every non-empty tensor's data_name its index in `blobs`
/// (appended in order). Throws InvalidArgument for an API name DumpWriter would refuse.
std::string forward_record_json(std::string_view key, const ApiCall& call, const std::vector<Value>& outputs,
                                Framework framework, std::vector<Tensor>& blobs);

}  // namespace probe::dump_writer
