// Every fixture written by tests/data/make_tensor_fixtures.py loads to exactly the values numpy/torch
// reported for it (tensors/expected.json).
#include <rapidjson/document.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <map>

#include "IoTestUtil.h"
#include "probe/tensor_file.h"
#include "support/Dispatch.h"

namespace probe {
namespace {

using test::tensors_dir;

const rapidjson::Document& expected() {
  static rapidjson::Document doc = [] {
    rapidjson::Document d;
    std::string text = testing::slurp(tensors_dir() + "expected.json");
    d.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag>(text.c_str());
    if (d.HasParseError()) throw std::runtime_error("cannot parse expected.json");
    return d;
  }();
  return doc;
}

bool ends_with(const std::string& s, const std::string& x) {
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// expected.json's "rejects" name the error kind probe must raise.
ErrorKind expected_kind(const std::string& kind) {
  return kind == "Security"      ? ErrorKind::Security
         : kind == "Unsupported" ? ErrorKind::Unsupported
                                 : ErrorKind::Format;
}

std::vector<NamedTensor> load_any(const std::string& path) {
  if (ends_with(path, ".npy")) return {{"", load_npy(path)}};
  if (ends_with(path, ".npz")) return load_npz(path);
  return load_pt(path);
}

void same_double(double got, double want, const std::string& where) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << where;
  } else {
    EXPECT_EQ(got, want) << where;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << where;
  }
}

void check_tensor(const Tensor& t, const rapidjson::Value& want, const std::string& where) {
  ASSERT_EQ(std::string(name(t.dtype())), want["dtype"].GetString()) << where;
  Shape shape;
  for (const auto& d : want["shape"].GetArray()) shape.push_back(d.GetInt64());
  ASSERT_EQ(t.shape(), shape) << where;
  const auto& values = want["values"];
  ASSERT_EQ(static_cast<std::int64_t>(values.Size()), t.numel()) << where;
  detail::visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (rapidjson::SizeType i = 0; i < values.Size(); ++i) {
      T v;
      std::memcpy(&v, t.bytes() + i * sizeof(T), sizeof(T));
      std::string at = where + " element " + std::to_string(i);
      if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
        same_double(static_cast<double>(v.real()), values[i][0].GetDouble(), at + " real");
        same_double(static_cast<double>(v.imag()), values[i][1].GetDouble(), at + " imag");
      } else if constexpr (std::is_same_v<T, bool>) {
        EXPECT_EQ(static_cast<int>(v), values[i].GetInt()) << at;
      } else if constexpr (std::is_same_v<T, std::uint64_t>) {
        EXPECT_EQ(v, values[i].GetUint64()) << at;
      } else if constexpr (std::is_integral_v<T>) {
        EXPECT_EQ(static_cast<std::int64_t>(v), values[i].GetInt64()) << at;
      } else {
        same_double(detail::as_double(v), values[i].GetDouble(), at);
      }
    }
  });
}

TEST(TensorFixtures, EveryFixtureMatchesNumpyAndTorch) {
  const auto& files = expected()["files"];
  int checked = 0;
  for (auto it = files.MemberBegin(); it != files.MemberEnd(); ++it) {
    std::string file = it->name.GetString();
    SCOPED_TRACE(file);
    std::vector<NamedTensor> got;
    try {
      got = load_any(tensors_dir() + file);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const auto& want = it->value["tensors"];
    std::map<std::string, const Tensor*> by_name;
    for (const auto& nt : got) by_name[nt.name] = &nt.tensor;
    EXPECT_EQ(got.size(), want.MemberCount());
    for (auto w = want.MemberBegin(); w != want.MemberEnd(); ++w) {
      auto found = by_name.find(w->name.GetString());
      if (found == by_name.end()) {
        ADD_FAILURE() << "missing tensor '" << w->name.GetString() << "'";
        continue;
      }
      check_tensor(*found->second, w->value, file + "[" + w->name.GetString() + "]");
      ++checked;
    }
  }
  EXPECT_GE(checked, 60);
}

TEST(TensorFixtures, RejectedFixturesGiveTheExpectedErrorKind) {
  const auto& rejects = expected()["rejects"];
  for (auto it = rejects.MemberBegin(); it != rejects.MemberEnd(); ++it) {
    std::string file = it->name.GetString(), kind = it->value.GetString();
    const ErrorKind want = expected_kind(kind);
    test::expect_error([&] { load_tensor_file(tensors_dir() + file); }, want, {file});
  }
}

// read_tensor_header gives each single-tensor file's dtype and shape as numpy/torch reported them, and
// refuses what load_tensor_file refuses with the same kind of error.
TEST(TensorFixtures, HeadersMatchNumpyAndTorch) {
  const auto& files = expected()["files"];
  int checked = 0;
  for (auto it = files.MemberBegin(); it != files.MemberEnd(); ++it) {
    const std::string file = it->name.GetString();
    const auto& tensors = it->value["tensors"];
    if (ends_with(file, ".npz") || tensors.MemberCount() != 1 || !tensors.HasMember("")) continue;
    SCOPED_TRACE(file);
    const auto& want = tensors[""];
    try {
      const TensorHeader h = read_tensor_header(tensors_dir() + file);
      EXPECT_EQ(std::string(name(h.dtype)), want["dtype"].GetString());
      Shape shape;
      for (const auto& d : want["shape"].GetArray()) shape.push_back(d.GetInt64());
      EXPECT_EQ(h.shape, shape);
      ++checked;
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(checked, 40);
  const auto& rejects = expected()["rejects"];
  for (auto it = rejects.MemberBegin(); it != rejects.MemberEnd(); ++it) {
    std::string file = it->name.GetString(), kind = it->value.GetString();
    const ErrorKind want = expected_kind(kind);
    test::expect_error([&] { read_tensor_header(tensors_dir() + file); }, want, {file});
  }
  // Several tensors where one is expected: the same refusal as load_tensor_file's.
  test::expect_error([&] { read_tensor_header(tensors_dir() + "pt_shared_list.pt"); }, ErrorKind::Format,
                     {"pt_shared_list.pt", "holds 4 tensors where one was expected"});
}

// Issue 14 item 7: a header read never inflates a storage record. The fixture's data/0 is 16 MiB of
// deflated zeros whose compressed stream was garbled (make_fault_fixtures.py): loading it must fail,
// reading its header must not notice.
TEST(TensorFixtures, HeaderOfADeflatedPtIsReadWithoutInflating) {
  const std::string file = std::string(PROBE_TEST_DATA_DIR) + "/faults/pt_garbled_deflated.pt";
  const TensorHeader h = read_tensor_header(file);
  EXPECT_EQ(h.dtype, DType::Float32);
  EXPECT_EQ(h.shape, Shape{std::int64_t{1} << 22});
  test::expect_error([&] { load_tensor_file(file); }, ErrorKind::Format, {"pt_garbled_deflated.pt"});
  // The bomb (a 12-element storage whose record claims 64 MiB) is refused by the header read too.
  test::expect_error(
      [&] { read_tensor_header(std::string(PROBE_TEST_DATA_DIR) + "/faults/pt_inflate_bomb.pt"); },
      ErrorKind::Format, {"tensor storage needs 48", "decompression bomb"});
}

TEST(TensorFixtures, ContiguousDataIsMappedNotCopied) {
  for (const char* f : {"npy_float32.npy", "npy_complex128.npy", "npy_v3_int32.npy", "pt_float32.pt",
                        "pt_bfloat16.pt", "pt_zip64.pt", "Functional.relu.0.forward.input.0.pt"}) {
    Tensor t = load_tensor_file(tensors_dir() + f);
    if (std::string(f) == "pt_zip64.pt") {
      EXPECT_FALSE(t.is_mapped()) << f << " is a transposed view: materialised";
    } else {
      EXPECT_TRUE(t.is_mapped()) << f;
    }
  }
  // Byte-swapped, Fortran-order and deflated data cannot be mapped.
  EXPECT_FALSE(load_tensor_file(tensors_dir() + "npy_be_float64.npy").is_mapped());
  EXPECT_FALSE(load_tensor_file(tensors_dir() + "npy_fortran_float32.npy").is_mapped());
  EXPECT_FALSE(load_npz_member(tensors_dir() + "npz_deflated.npz", "a").is_mapped());
  // numpy does not align npz members: a 1-byte dtype is mapped in place, wider ones copied if misaligned.
  EXPECT_TRUE(load_npz_member(tensors_dir() + "npz_stored.npz", "c.npy").is_mapped());
}

TEST(TensorFixtures, TensorsSavedTogetherShareOneStorage) {
  auto all = load_pt(tensors_dir() + "pt_shared_list.pt");
  ASSERT_EQ(all.size(), 4u);
  // b and b[2] are contiguous views of the same record: one mapping, no copy.
  EXPECT_EQ(all[0].tensor.storage(), all[2].tensor.storage());
  EXPECT_EQ(all[2].tensor.bytes(), all[0].tensor.bytes() + 2 * 5 * 2);
  // b.t() and b[1:3, ::2] are strided: materialised in C order.
  EXPECT_FALSE(all[1].tensor.is_mapped());
  EXPECT_EQ(all[3].tensor.shape(), (Shape{2, 3}));
}

TEST(TensorFixtures, LoadTensorFileRequiresExactlyOneTensor) {
  EXPECT_EQ(load_tensor_file(tensors_dir() + "pt_0d.pt").shape(), Shape{});
  test::expect_error([] { load_tensor_file(tensors_dir() + "pt_shared_list.pt"); }, ErrorKind::Format,
                     {"pt_shared_list.pt", "4 tensors"});
}

TEST(TensorFixtures, NpzMemberLookup) {
  EXPECT_EQ(load_npz_member(tensors_dir() + "npz_deflated.npz", "b").shape(), Shape{5});
  test::expect_error([] { load_npz_member(tensors_dir() + "npz_stored.npz", "zz"); }, ErrorKind::Format,
                     {"zz", "npz_stored.npz"});
}

TEST(TensorFixtures, MissingFileIsAnIoError) {
  test::expect_error([] { load_tensor_file(tensors_dir() + "no_such_file.npy"); }, ErrorKind::Io,
                     {"no_such_file.npy"});
}

}  // namespace
}  // namespace probe
