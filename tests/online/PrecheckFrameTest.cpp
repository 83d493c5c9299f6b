// Online pre-check frames (probe/precheck_frame.h). Expected bytes and values come from
// tests/data/precheck_frame/make_frames.py, an encoder written in Python with numpy/torch and zlib.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "probe/error.h"
#include "probe/precheck_frame.h"

namespace {

using probe::DType;
using probe::Error;
using probe::ErrorKind;
using probe::Tensor;
using probe::online::decode_frame;
using probe::online::encode_frame;
using probe::online::FrameLimits;
using Bytes = std::vector<std::byte>;

const std::string kDir = std::string(PROBE_TEST_DATA_DIR) + "/precheck_frame/";

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}

std::uint64_t get_le(const Bytes& b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(b[at + i]);
  return v;
}
void put_le(Bytes& b, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}
void append_le(Bytes& b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}
void fix_crc(Bytes& b) {
  put_le(b, b.size() - 4, crc32_z(0, reinterpret_cast<const Bytef*>(b.data()), b.size() - 4), 4);
}

/// A frame laid out by hand from the layout in precheck_frame.h, with a correct length and CRC, so that
/// the decoder's header checks can be reached with any header text and blob bytes.
Bytes raw_frame(const std::string& header, const std::vector<std::string>& blobs) {
  Bytes b;
  for (char c : std::string("PRBF")) b.push_back(static_cast<std::byte>(c));
  append_le(b, 1, 2);
  append_le(b, 0, 2);
  append_le(b, 0, 8);  // length, set below
  append_le(b, header.size(), 4);
  append_le(b, blobs.size(), 4);
  for (const auto& blob : blobs) append_le(b, blob.size(), 8);
  for (char c : header) b.push_back(static_cast<std::byte>(c));
  for (const auto& blob : blobs)
    for (char c : blob) b.push_back(static_cast<std::byte>(c));
  append_le(b, 0, 4);
  put_le(b, 8, b.size(), 8);
  fix_crc(b);
  return b;
}

std::string doc(const std::string& body, const std::string& key = "Torch.add.0.forward") {
  return R"({"task":"tensor","level":"L1","framework":"pytorch","dump_data_dir":"frame","data":{")" + key +
         "\":" + body + "}}";
}
std::string desc(const std::string& dtype, const std::string& shape, const std::string& data_name) {
  return R"({"type":"torch.Tensor","dtype":")" + dtype + R"(","shape":)" + shape +
         R"(,"Max":null,"Min":null,"Mean":null,"Norm":null,"requires_grad":false,"data_name":")" + data_name +
         "\"}";
}

/// Decoding must fail with a Format error whose text contains `needle`.
void expect_format_error(const Bytes& frame, const std::string& needle, const FrameLimits& limits = {}) {
  try {
    decode_frame(frame, limits, "test frame");
    ADD_FAILURE() << "decoded although it should fail with: " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test frame"), std::string::npos) << e.what();
  }
}

struct ExpectedBlob {
  std::string frame, dtype, shape;
  std::size_t index = 0;
  std::vector<double> values;
};

std::vector<ExpectedBlob> expected_blobs() {
  std::ifstream in(kDir + "expected.txt");
  EXPECT_TRUE(in);
  std::vector<ExpectedBlob> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    ExpectedBlob e;
    words >> e.frame >> e.index >> e.dtype >> e.shape;
    std::string v;
    while (words >> v) e.values.push_back(std::strtod(v.c_str(), nullptr));  // strtod reads nan/inf
    out.push_back(std::move(e));
  }
  return out;
}

std::string shape_text(const probe::Shape& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) t.push_back(',');
    t.append(std::to_string(s[i]));
  }
  t.push_back(']');
  return t;
}

TEST(PrecheckFrame, DecodesFramesWrittenByPython) {
  const auto expected = expected_blobs();
  ASSERT_EQ(expected.size(), 15u);  // 13 blobs in all_dtypes.frame, 2 in relu.frame
  for (const std::string name : {"all_dtypes.frame", "relu.frame"}) {
    const auto frame = decode_frame(read_bytes(kDir + name));
    std::size_t seen = 0;
    for (const auto& e : expected) {
      if (e.frame != name) continue;
      ++seen;
      SCOPED_TRACE(name + " blob " + std::to_string(e.index));
      ASSERT_LT(e.index, frame.tensors.size());
      const Tensor& t = frame.tensors[e.index];
      EXPECT_EQ(probe::torch_name(t.dtype()), e.dtype);
      EXPECT_EQ(shape_text(t.shape()), e.shape);
      ASSERT_EQ(static_cast<std::size_t>(t.numel()), e.values.size());
      for (std::size_t i = 0; i < e.values.size(); ++i) {
        const double got = t.at(static_cast<std::int64_t>(i)), want = e.values[i];
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << i;
        } else {
          EXPECT_EQ(got, want) << i;
          EXPECT_EQ(std::signbit(got), std::signbit(want)) << i;  // -0.0 survives
        }
      }
    }
    EXPECT_EQ(seen, frame.tensors.size());
  }
}

TEST(PrecheckFrame, HeaderIsADumpEntry) {
  const auto frame = decode_frame(read_bytes(kDir + "all_dtypes.frame"));
  const auto& entry = frame.entry();
  EXPECT_EQ(entry.key, "Torch.mixed.0.forward");
  EXPECT_EQ(entry.name.api, "mixed");
  ASSERT_NE(entry.kwargs(), nullptr);
  ASSERT_NE(entry.kwargs()->find("dim"), nullptr);
  EXPECT_EQ(entry.kwargs()->find("dim")->leaf().value.as_int(), -1);
  // 13 blob descriptors plus the statistics-only one, which carries no blob.
  const auto tensors = entry.tensors();
  ASSERT_EQ(tensors.size(), 14u);
  std::size_t without_blob = 0;
  for (const auto* info : tensors) {
    if (!info->has_file()) {
      ++without_blob;
      EXPECT_THROW(frame.tensor(*info), Error);
      continue;
    }
    EXPECT_EQ(frame.tensor(*info).dtype(), *info->dtype);
    EXPECT_EQ(frame.tensor(*info).shape(), info->shape);
  }
  EXPECT_EQ(without_blob, 1u);
  // The nested list argument [bf16 tensor, 3]: its tensor is blob 1.
  const auto& nested = entry.inputs()->items().at(1);
  EXPECT_EQ(frame.tensor(nested.items().at(0).tensor()).dtype(), DType::BFloat16);
}

// probe's encoder, given the header text and tensors of the Python frames, writes the same bytes.
TEST(PrecheckFrame, EncoderMatchesPythonBytes) {
  for (const std::string name : {"all_dtypes.frame", "relu.frame"}) {
    const Bytes python = read_bytes(kDir + name);
    const auto decoded = decode_frame(python);
    const std::size_t count = get_le(python, 20, 4);
    const std::string header(reinterpret_cast<const char*>(python.data()) + 24 + 8 * count,
                             get_le(python, 16, 4));
    EXPECT_EQ(encode_frame(header, decoded.tensors), python) << name;
  }
}

TEST(PrecheckFrame, RoundTripsEveryDType) {
  for (int d = 0; d < probe::kDTypeCount; ++d) {
    const auto dtype = static_cast<DType>(d);
    SCOPED_TRACE(std::string(probe::name(dtype)));
    std::vector<Tensor> tensors{Tensor::zeros(dtype, {2, 3}), Tensor::zeros(dtype, {}),
                                Tensor::zeros(dtype, {0})};
    // A distinct byte pattern per element (bool: 0/1, the only valid bytes).
    auto* p = reinterpret_cast<unsigned char*>(tensors[0].mutable_bytes());
    for (std::size_t i = 0; i < tensors[0].nbytes(); ++i)
      p[i] =
          dtype == DType::Bool ? static_cast<unsigned char>(i % 2) : static_cast<unsigned char>(i * 37 + 1);
    const std::string type(probe::torch_name(dtype));
    const auto header = doc(R"({"input_args":[)" + desc(type, "[2,3]", "0") + "," + desc(type, "[]", "1") +
                            "," + desc(type, "[0]", "2") + R"(],"input_kwargs":{},"output":[]})");
    const auto bytes = encode_frame(header, tensors);
    EXPECT_EQ(bytes.size(), probe::online::kFrameOverhead + 8 * 3 + header.size() + tensors[0].nbytes() +
                                tensors[1].nbytes());
    const auto back = decode_frame(bytes);
    ASSERT_EQ(back.tensors.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(back.tensors[i].dtype(), dtype);
      EXPECT_EQ(back.tensors[i].shape(), tensors[i].shape());
      ASSERT_EQ(back.tensors[i].nbytes(), tensors[i].nbytes());
      EXPECT_EQ(std::memcmp(back.tensors[i].bytes(), tensors[i].bytes(), tensors[i].nbytes()), 0);
    }
  }
}

TEST(PrecheckFrame, EveryTruncationIsAClearError) {
  const Bytes frame = read_bytes(kDir + "relu.frame");
  for (std::size_t n = 0; n < frame.size(); ++n) {
    const Bytes cut(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(n));
    expect_format_error(cut, "truncated frame");
  }
  Bytes longer = frame;
  longer.push_back(std::byte{0});
  expect_format_error(longer, "trailing bytes");
}

TEST(PrecheckFrame, EveryCorruptedByteIsRefused) {
  const Bytes frame = read_bytes(kDir + "relu.frame");
  for (std::size_t i = 0; i < frame.size(); ++i) {
    Bytes bad = frame;
    bad[i] ^= std::byte{0x20};
    EXPECT_THROW(decode_frame(bad), Error) << "byte " << i;
    if (i >= 16) expect_format_error(bad, "CRC-32 mismatch");  // everything past magic..length
  }
}

TEST(PrecheckFrame, HostileLengthsAreRefusedBeforeUse) {
  const Bytes frame = read_bytes(kDir + "relu.frame");
  Bytes huge = frame;
  put_le(huge, 8, std::uint64_t{1} << 62, 8);
  expect_format_error(huge, "exceeds the limit");
  EXPECT_THROW(probe::online::frame_length(huge), Error);  // a stream reader never waits for 4 EiB
  EXPECT_EQ(probe::online::frame_length(frame), frame.size());
  EXPECT_EQ(probe::online::frame_length(std::span(frame).first(15)), std::nullopt);

  Bytes tiny = frame;
  put_le(tiny, 8, 5, 8);
  expect_format_error(tiny, "below the minimum");

  Bytes many = frame;  // blob count far beyond the limit (CRC repaired so the count check is what fails)
  put_le(many, 20, 0xFFFFFFFFu, 4);
  fix_crc(many);
  expect_format_error(many, "blob count 4294967295 exceeds the limit");

  FrameLimits roomy;
  roomy.max_tensors = 0xFFFFFFFFu;
  expect_format_error(many, "overruns the frame", roomy);

  Bytes long_header = frame;
  put_le(long_header, 16, 1u << 20, 4);
  fix_crc(long_header);
  expect_format_error(long_header, "header length 1048576 overruns the frame");

  Bytes long_blob = frame;
  put_le(long_blob, 24, std::uint64_t{1} << 60, 8);
  fix_crc(long_blob);
  expect_format_error(long_blob, "blob 0 length 1152921504606846976 overruns the frame");

  Bytes magic = frame;
  magic[0] = std::byte{'X'};
  expect_format_error(magic, "magic");
  Bytes version = frame;
  put_le(version, 4, 2, 2);
  expect_format_error(version, "unsupported frame version 2");
}

TEST(PrecheckFrame, ConfiguredBoundsApplyToBothSides) {
  const Bytes frame = read_bytes(kDir + "all_dtypes.frame");
  const auto decoded = decode_frame(frame);
  FrameLimits few;
  few.max_tensors = 12;  // the frame has 13 blobs
  expect_format_error(frame, "blob count 13 exceeds the limit 12", few);
  FrameLimits small;
  small.max_frame_bytes = frame.size() - 1;
  expect_format_error(frame, "exceeds the limit", small);
  FrameLimits short_header;
  short_header.max_header_bytes = 100;
  expect_format_error(frame, "exceeds the limit 100", short_header);
  const std::string header(reinterpret_cast<const char*>(frame.data()) + 24 + 8 * 13, get_le(frame, 16, 4));
  for (const FrameLimits& l : {few, small, short_header}) {
    try {
      encode_frame(header, decoded.tensors, l);
      ADD_FAILURE() << "encoded beyond a bound";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    }
  }
}

TEST(PrecheckFrame, DeepJsonIsRefused) {
  // GCC 12 warns (-Wrestrict, a false positive) on "[" + s + "]": built by repetition instead.
  const std::string deep = std::string(200, '[') + "0" + std::string(200, ']');
  const auto header = doc(R"({"input_args":[{"type":"int","value":1},)" + deep + "]}");
  FrameLimits limits;
  limits.max_json_depth = 64;
  expect_format_error(raw_frame(header, {}), "deep", limits);
  EXPECT_THROW(encode_frame(header, {}, limits), Error);
  limits.max_json_depth = 400;  // the same header within a larger bound decodes
  EXPECT_NO_THROW(decode_frame(raw_frame(header, {}), limits));
}

TEST(PrecheckFrame, HostileHeadersAreClearErrors) {
  const std::string f4(4, '\0');  // one float32
  const auto one = [](const std::string& data_name) {
    return doc(R"({"input_args":[)" + desc("torch.float32", "[1]", data_name) + "]}");
  };
  expect_format_error(raw_frame("not json", {}), "test frame");
  expect_format_error(raw_frame("{\"data\":{\"a\xff\":{}}}", {}), "Invalid encoding");
  expect_format_error(raw_frame(R"({"task":"tensor","data":{}})", {}), "exactly one API record, found 0");
  expect_format_error(raw_frame(R"({"data":{"Torch.a.0.forward":{},"Torch.b.0.forward":{}}})", {}),
                      "exactly one API record, found 2");
  for (const std::string name : {"../x", "01", "-1", "+0", "1", " 0", "0x0", "99999999999"})
    expect_format_error(raw_frame(one(name), {f4}), "is not a blob index");
  expect_format_error(raw_frame(doc(R"({"input_args":[)" + desc("torch.float32", "[1]", "0") + "," +
                                    desc("torch.float32", "[1]", "0") + "]}"),
                                {f4}),
                      "blob 0 is named twice");
  expect_format_error(raw_frame(one("0"), {f4, f4}), "blob 1 is named by no descriptor");
  expect_format_error(raw_frame(one("0"), {std::string(3, '\0')}),
                      "holds 3 bytes but torch.float32 (1,) needs 4");
  expect_format_error(raw_frame(doc(R"({"input_args":[)" + desc("torch.float32", "[-1]", "0") + "]}"), {f4}),
                      "test frame");
  expect_format_error(raw_frame(doc(R"({"input_args":[)" + desc("torch.bool", "[3]", "0") + "]}"),
                                {std::string("\x01\x02\x00", 3)}),
                      "holds a byte other than 0 or 1 at 1");
  try {
    decode_frame(raw_frame(doc(R"({"input_args":[)" + desc("torch.float8_e5m2", "[1]", "0") + "]}"), {"x"}));
    ADD_FAILURE() << "float8 decoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
    EXPECT_EQ(e.api(), "Torch.add.0.forward");
    EXPECT_EQ(e.field(), "input_args.0");
  }
}

TEST(PrecheckFrame, EncoderRefusesTensorsThatContradictTheHeader) {
  const auto header = doc(R"({"input_args":[)" + desc("torch.float32", "[2]", "0") + "]}");
  std::vector<Tensor> wrong_dtype{Tensor::zeros(DType::Int32, {2})};
  EXPECT_THROW(encode_frame(header, wrong_dtype), Error);
  std::vector<Tensor> wrong_shape{Tensor::zeros(DType::Float32, {1, 2})};
  EXPECT_THROW(encode_frame(header, wrong_shape), Error);
  std::vector<Tensor> right{Tensor::zeros(DType::Float32, {2})};
  EXPECT_EQ(decode_frame(encode_frame(header, right)).tensors.at(0).shape(), (probe::Shape{2}));
}

}  // namespace
