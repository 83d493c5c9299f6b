// Bad tensor files (truncated, lying, malicious) give a probe::Error naming the file and the problem:
// never a crash, a hang or an allocation sized by a declared value.
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "IoTestUtil.h"
#include "io/TensorIo.h"
#include "probe/tensor_file.h"

namespace probe {
namespace {

using test::expect_error;
using test::tensors_dir;
using testing::slurp;
using namespace std::string_literals;

std::string npy_with_header(const std::string& dict, int major = 1,
                            std::string data = std::string(64, '\0')) {
  std::string h = dict;
  std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t k = 0; k < (major == 1 ? 2u : 4u); ++k)
    out += static_cast<char>((h.size() >> (8 * k)) & 0xFF);
  return out + h + data;
}

TEST(NpyRobustness, EveryTruncationIsAFormatError) {
  test::TempDir dir;
  for (const char* name : {"npy_float64.npy", "npy_v3_int32.npy", "npy_fortran_int64.npy"}) {
    std::string good = slurp(tensors_dir() + name);
    for (std::size_t n = 0; n < good.size(); n += (n < 140 ? 1 : 11)) {
      std::string path = dir.file("cut.npy", good.substr(0, n));
      SCOPED_TRACE(std::string(name) + " cut at " + std::to_string(n));
      expect_error([&] { load_npy(path); }, ErrorKind::Format, {"cut.npy"});
    }
  }
}

TEST(NpyRobustness, WrongMagicAndVersion) {
  test::TempDir dir;
  std::string good = slurp(tensors_dir() + "npy_float32.npy");
  std::string bad = good;
  bad[1] = 'M';
  expect_error([&] { load_npy(dir.file("magic.npy", bad)); }, ErrorKind::Format, {"magic.npy", "magic"});
  bad = good;
  bad[6] = 9;
  expect_error([&] { load_npy(dir.file("ver.npy", bad)); }, ErrorKind::Unsupported,
               {"ver.npy", "version 9.0"});
  expect_error([&] { load_tensor_file(dir.file("text.dat", "hello world")); }, ErrorKind::Unsupported,
               {"text.dat"});
}

TEST(NpyRobustness, HeaderThatLiesAboutSizes) {
  test::TempDir dir;
  // 64 data bytes follow, the header claims 1000x1000 float64.
  std::string f = npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1000), }");
  expect_error([&] { load_npy(dir.file("lie.npy", f)); }, ErrorKind::Format, {"lie.npy", "(1000, 1000)"});
  // Header length field larger than the file.
  std::string g = slurp(tensors_dir() + "npy_float32.npy");
  g[8] = '\xff';
  g[9] = '\x7f';
  expect_error([&] { load_npy(dir.file("hlen.npy", g)); }, ErrorKind::Format, {"hlen.npy", "header claims"});
}

TEST(NpyRobustness, AbsurdShapesAreRejectedBeforeAllocating) {
  test::TempDir dir;
  for (const char* shape : {"(9223372036854775807, 2)", "(4611686018427387904,)", "(99999999999999999999,)",
                            "(3037000500, 3037000500)", "(-1, 2)"}) {
    SCOPED_TRACE(shape);
    std::string f =
        npy_with_header(std::string("{'descr': '<f8', 'fortran_order': True, 'shape': ") + shape + ", }");
    expect_error([&] { load_npy(dir.file("huge.npy", f)); }, ErrorKind::Format, {"huge.npy"});
  }
  std::string many = "(";
  for (int k = 0; k < 70; ++k) many += "1, ";
  many += ")";
  expect_error(
      [&] {
        load_npy(dir.file("dims.npy", npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': " +
                                                      many + ", }")));
      },
      ErrorKind::Format, {"dims.npy", "dimensions"});
}

TEST(NpyRobustness, MalformedHeaders) {
  test::TempDir dir;
  const char* bad[] = {
      "{'descr': '<f8', 'fortran_order': False}",                           // no shape
      "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2,), }",          // not a bool
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1, }",  // unknown key
      "{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '<f8, 'fortran_order': False, 'shape': (2,), }",  // unterminated quotes
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2), }",  // (2) is not a tuple
      "['descr', '<f8']",
      "",
  };
  for (const char* h : bad) {
    SCOPED_TRACE(h);
    expect_error([&] { load_npy(dir.file("hdr.npy", npy_with_header(h))); }, ErrorKind::Format, {"hdr.npy"});
  }
  expect_error(
      [&] {
        load_npy(
            dir.file("v.npy", npy_with_header("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }")));
      },
      ErrorKind::Unsupported, {"v.npy", "<V2"});
  expect_error(
      [&] {
        load_npy(dir.file(
            "s.npy", npy_with_header("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }")));
      },
      ErrorKind::Unsupported, {"s.npy", "structured"});
}

TEST(NpyRobustness, InvalidUtf8AndNonAsciiHeaders) {
  test::TempDir dir;
  std::string v3 =
      npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), '\xc3\x28': 1}", 3);
  expect_error([&] { load_npy(dir.file("u3.npy", v3)); }, ErrorKind::Format, {"u3.npy", "UTF-8"});
  std::string overlong =
      npy_with_header("{'descr': '<f8\xc0\xae', 'fortran_order': False, 'shape': (2,), }", 3);
  expect_error([&] { load_npy(dir.file("o3.npy", overlong)); }, ErrorKind::Format, {"o3.npy", "UTF-8"});
  std::string v1 = npy_with_header("{'descr': '<f8\xe9', 'fortran_order': False, 'shape': (2,), }", 1);
  expect_error([&] { load_npy(dir.file("u1.npy", v1)); }, ErrorKind::Format, {"u1.npy", "non-ASCII"});
  // Valid UTF-8 in a version 3 header is fine where Python allows it, but é is no dtype.
  std::string ok3 = npy_with_header("{'descr': '<f8\xc3\xa9', 'fortran_order': False, 'shape': (2,), }", 3);
  expect_error([&] { load_npy(dir.file("e3.npy", ok3)); }, ErrorKind::Unsupported, {"e3.npy"});
}

// ---- zip containers

struct Member {
  std::string name, payload;  // payload as stored in the archive
  int method = 0;
  std::uint32_t crc = 0;
  std::uint64_t usize = 0;
};

void le(std::string& o, std::uint64_t v, int n) {
  for (int k = 0; k < n; ++k) o += static_cast<char>((v >> (8 * k)) & 0xFF);
}

std::string make_zip(const std::vector<Member>& members) {
  std::string out, cd;
  for (const Member& m : members) {
    std::uint64_t off = out.size();
    std::string h;
    le(h, 0x04034b50, 4);
    le(h, 20, 2);
    le(h, 0, 2);
    le(h, static_cast<std::uint64_t>(m.method), 2);
    le(h, 0, 4);
    le(h, m.crc, 4);
    le(h, m.payload.size(), 4);
    le(h, m.usize, 4);
    le(h, m.name.size(), 2);
    le(h, 0, 2);
    out += h + m.name + m.payload;
    le(cd, 0x02014b50, 4);
    le(cd, 20, 2);
    le(cd, 20, 2);
    le(cd, 0, 2);
    le(cd, static_cast<std::uint64_t>(m.method), 2);
    le(cd, 0, 4);
    le(cd, m.crc, 4);
    le(cd, m.payload.size(), 4);
    le(cd, m.usize, 4);
    le(cd, m.name.size(), 2);
    le(cd, 0, 2);
    le(cd, 0, 2);
    le(cd, 0, 2);
    le(cd, 0, 2);
    le(cd, 0, 4);
    le(cd, off, 4);
    cd += m.name;
  }
  std::uint64_t cd_off = out.size();
  out += cd;
  le(out, 0x06054b50, 4);
  le(out, 0, 4);
  le(out, members.size(), 2);
  le(out, members.size(), 2);
  le(out, cd.size(), 4);
  le(out, cd_off, 4);
  le(out, 0, 2);
  return out;
}

Member deflated(const std::string& name, const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  Member m{name, out, 8,
           static_cast<std::uint32_t>(
               crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()))),
           data.size()};
  return m;
}

TEST(ZipRobustness, ZipBombIsRefusedBeforeInflating) {
  test::TempDir dir;
  std::string npy = slurp(tensors_dir() + "npy_float32.npy");
  // Claims 4 GiB - 1 from a few bytes: more than deflate can produce, refused without allocating.
  Member bomb = deflated("a.npy", npy);
  bomb.usize = 0xFFFFFFF0;
  expect_error([&] { load_npz(dir.file("bomb.npz", make_zip({bomb}))); }, ErrorKind::Format,
               {"bomb.npz", "zip bomb"});
  bomb.usize = 0xFFFFFFFF;  // the ZIP64 marker, without the ZIP64 field it announces
  expect_error([&] { load_npz(dir.file("bomb64.npz", make_zip({bomb}))); }, ErrorKind::Format,
               {"bomb64.npz"});
  // A real 8 MiB of zeros deflates ~1000x; declaring a smaller size must not let it write past it.
  std::string zeros = npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (8388608,), }", 1,
                                      std::string(8u << 20, '\0'));
  Member big = deflated("z.npy", zeros);
  big.usize = 1000;
  expect_error([&] { load_npz(dir.file("liar.npz", make_zip({big}))); }, ErrorKind::Format,
               {"liar.npz", "z.npy"});
  // Corrupt compressed bytes and a wrong CRC.
  Member corrupt = deflated("c.npy", npy);
  corrupt.payload[corrupt.payload.size() / 2] ^= 0x55;
  expect_error([&] { load_npz(dir.file("corrupt.npz", make_zip({corrupt}))); }, ErrorKind::Format,
               {"corrupt.npz"});
  Member crc = deflated("c.npy", npy);
  crc.crc ^= 1;
  expect_error([&] { load_npz(dir.file("crc.npz", make_zip({crc}))); }, ErrorKind::Format, {"crc.npz"});
  // The honest version of the same archive loads.
  EXPECT_EQ(load_npz(dir.file("ok.npz", make_zip({deflated("a.npy", npy)})))[0].tensor.shape(),
            (Shape{2, 3}));
}

TEST(ZipRobustness, StoredMemberPastTheEndOfTheFile) {
  test::TempDir dir;
  std::string npy = slurp(tensors_dir() + "npy_float32.npy");
  std::string z = make_zip({{"a.npy", npy, 0, 0, npy.size()}});
  // Make the central directory claim a larger stored size than the archive holds.
  std::size_t cd = z.rfind("PK\x01\x02"s);
  for (int k : {20, 24}) {
    z[cd + k] = '\x00';
    z[cd + k + 1] = '\x00';
    z[cd + k + 2] = '\x10';
    z[cd + k + 3] = '\x00';
  }
  expect_error([&] { load_npz(dir.file("past.npz", z)); }, ErrorKind::Format, {"past.npz"});
}

TEST(PtRobustness, EveryTruncationIsAnError) {
  test::TempDir dir;
  for (const char* name : {"pt_float32.pt", "pt_zip64.pt", "pt_deflated.pt"}) {
    std::string good = slurp(tensors_dir() + name);
    for (std::size_t n = 0; n < good.size(); n += 5) {
      std::string path = dir.file("cut.pt", good.substr(0, n));
      SCOPED_TRACE(std::string(name) + " cut at " + std::to_string(n));
      try {
        load_pt(path);
        ADD_FAILURE() << "truncated file loaded";
      } catch (const Error& e) {
        EXPECT_TRUE(e.kind() == ErrorKind::Format || e.kind() == ErrorKind::Unsupported) << e.what();
        EXPECT_NE(std::string(e.what()).find("cut.pt"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(PtRobustness, ForbiddenGlobalsInRealArchives) {
  expect_error([] { load_pt(tensors_dir() + "evil_os_system.pt"); }, ErrorKind::Security,
               {"evil_os_system.pt", "posix.system", "D10"});
  expect_error([] { load_pt(tensors_dir() + "evil_eval.pt"); }, ErrorKind::Security,
               {"evil_eval.pt", "__builtin__.eval"});
  expect_error([] { load_pt(tensors_dir() + "pt_legacy.pt"); }, ErrorKind::Unsupported,
               {"pt_legacy.pt", "legacy"});
}

// ---- the pickle VM on hand-written opcode streams

std::vector<NamedTensor> unpickle(const std::string& p) {
  auto storage = make_owned_storage(64);
  io::StorageLoader load = [&](const std::string&, std::uint64_t) {
    return io::StorageBytes{storage, 0, 24};
  };
  return io::unpickle_tensors(p, load, "x.pt");
}

// data.pkl of one float32 tensor of `size`/`stride` over a 6-element storage.
std::string tensor_pickle(const std::string& size, const std::string& stride, int offset = 0, int numel = 6) {
  std::string p =
      "\x80\x02"
      "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\0\0\0storage"
      "ctorch\nFloatStorage\n"
      "X\x01\0\0\0"
      "0X\x03\0\0\0cpuK"s;
  p += static_cast<char>(numel);
  p += "tQK";
  p += static_cast<char>(offset);
  p += size + stride +
       "\x89"
       "ccollections\nOrderedDict\n)RtR."s;
  return p;
}

TEST(PickleRobustness, AllowedPickleLoads) {
  auto t = unpickle(tensor_pickle("(K\x02K\x03t", "(K\x03K\x01t"));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].tensor.shape(), (Shape{2, 3}));
}

TEST(PickleRobustness, ForbiddenGlobals) {
  expect_error(
      [] {
        unpickle(
            "\x80\x02"
            "cos\nsystem\nX\x02\0\0\0lsR."s);
      },
      ErrorKind::Security, {"x.pt", "os.system"});
  // STACK_GLOBAL (protocol 4) spelling of builtins.eval.
  expect_error(
      [] {
        unpickle(
            "\x80\x04\x8c\x08"
            "builtins\x8c\x04"
            "eval\x93X\x01\0\0\0"
            "1\x85R."s);
      },
      ErrorKind::Security, {"builtins.eval"});
  expect_error([] { unpickle("\x80\x02(X\x01\0\0\0aios\nsystem\n."s); }, ErrorKind::Security,
               {"INST", "os.system"});
  expect_error(
      [] {
        unpickle(
            "\x80\x02"
            "ctorch\nload\n.");
      },
      ErrorKind::Security, {"torch.load"});
  // Even an allowed class cannot be called with REDUCE if it is not a rebuild function.
  expect_error(
      [] {
        unpickle(
            "\x80\x02"
            "ctorch\nFloatStorage\n)R.");
      },
      ErrorKind::Security, {"cannot be called"});
}

// The allow-list as a table, both ways. A pickle holding only GLOBAL (`c<module>\n<name>\n.`) calls nothing:
// an allowed name loads (the root is a class or function, not a tensor: nothing is returned), anything else
// is refused at the GLOBAL opcode itself. The allowed names are the ones torch.save writes for tensors,
// storages and their containers (torch/_utils.py, torch/serialization.py, torch_npu's legacy rebuild).
std::string global_only(const std::string& module, const std::string& name) {
  return "\x80\x02"s + "c" + module + "\n" + name + "\n.";
}
// The protocol-4 spelling of the same: two short strings and STACK_GLOBAL.
std::string stack_global_only(const std::string& module, const std::string& name) {
  return "\x80\x04\x8c"s + static_cast<char>(module.size()) + module + "\x8c" +
         static_cast<char>(name.size()) + name + "\x93.";
}

TEST(PickleRobustness, EveryAllowedGlobalLoads) {
  std::vector<std::pair<std::string, std::string>> allowed = {
      {"torch._utils", "_rebuild_tensor"},
      {"torch._utils", "_rebuild_tensor_v2"},
      {"torch._utils", "_rebuild_tensor_v3"},
      {"torch._utils", "_rebuild_parameter"},
      {"torch._utils", "_rebuild_parameter_with_state"},
      {"torch._tensor", "_rebuild_from_type_v2"},
      {"torch_npu.utils.storage", "_rebuild_npu_tensor"},
      {"collections", "OrderedDict"},
      {"torch", "Size"},
      {"torch", "device"},
      {"torch", "Tensor"},
      {"torch.nn.parameter", "Parameter"},
  };
  // Storage classes, from every module torch and torch_npu pickle them under.
  for (const char* module : {"torch", "torch.cuda", "torch.storage", "torch_npu", "torch.npu"})
    for (const char* cls :
         {"FloatStorage",       "HalfStorage",          "BFloat16Storage",        "DoubleStorage",
          "ByteStorage",        "CharStorage",          "ShortStorage",           "IntStorage",
          "LongStorage",        "BoolStorage",          "ComplexFloatStorage",    "ComplexDoubleStorage",
          "UInt16Storage",      "UInt32Storage",        "UInt64Storage",          "UntypedStorage",
          "Float8_e5m2Storage", "Float8_e4m3fnStorage", "Float8_e5m2fnuzStorage", "Float8_e4m3fnuzStorage",
          "QInt8Storage",       "QUInt8Storage",        "QInt32Storage",          "QUInt4x2Storage",
          "QUInt2x4Storage"})
      allowed.emplace_back(module, cls);
  // torch.<dtype> objects (_rebuild_tensor_v3's dtype argument), with torch's aliases.
  for (const char* dtype : {"float16",
                            "half",
                            "bfloat16",
                            "float32",
                            "float",
                            "float64",
                            "double",
                            "uint8",
                            "int8",
                            "int16",
                            "short",
                            "int32",
                            "int",
                            "int64",
                            "long",
                            "bool",
                            "complex64",
                            "cfloat",
                            "complex128",
                            "cdouble",
                            "uint16",
                            "uint32",
                            "uint64",
                            "float8_e5m2",
                            "float8_e4m3fn",
                            "float8_e5m2fnuz",
                            "float8_e4m3fnuz"})
    allowed.emplace_back("torch", dtype);
  for (const auto& [module, name] : allowed) {
    SCOPED_TRACE(module + "." + name);
    try {
      EXPECT_TRUE(unpickle(global_only(module, name)).empty());
      EXPECT_TRUE(unpickle(stack_global_only(module, name)).empty());
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(PickleRobustness, DangerousGlobalsAreRefusedAtTheGlobalOpcode) {
  const std::pair<std::string, std::string> dangerous[] = {
      {"builtins", "eval"},
      {"builtins", "exec"},
      {"builtins", "compile"},
      {"builtins", "open"},
      {"builtins", "getattr"},
      {"builtins", "setattr"},
      {"builtins", "__import__"},
      {"builtins", "globals"},
      {"__builtin__", "eval"},
      {"__builtin__", "exec"},
      {"os", "system"},
      {"os", "popen"},
      {"os", "execv"},
      {"os", "remove"},
      {"posix", "system"},
      {"nt", "system"},
      {"subprocess", "Popen"},
      {"subprocess", "run"},
      {"subprocess", "check_output"},
      {"shutil", "rmtree"},
      {"pickle", "loads"},
      {"_pickle", "loads"},
      {"marshal", "loads"},
      {"types", "FunctionType"},
      {"types", "CodeType"},
      {"copyreg", "_reconstructor"},
      {"functools", "partial"},
      {"operator", "attrgetter"},
      {"operator", "methodcaller"},
      {"importlib", "import_module"},
      {"runpy", "_run_code"},
      {"torch", "load"},
      {"torch.serialization", "load"},
      {"torch.storage", "_load_from_bytes"},  // torch.load of the bytes: an unpickler without the allow-list
      {"torch._C", "_import_ir_module_from_package"},
      {"numpy", "load"},
      {"numpy.core.multiarray", "_reconstruct"},
      // Near misses of allowed names: another module, a member of an allowed class.
      {"os", "FloatStorage"},
      {"torch", "Tensor.__reduce_ex__"},
      {"torch.Tensor", "__setstate__"},
      {"torch", "eval"},
  };
  for (const auto& [module, name] : dangerous) {
    const std::string full = module + "." + name;
    SCOPED_TRACE(full);
    // Refused at the opcode naming the global: GLOBAL at byte 2, STACK_GLOBAL just before STOP.
    const std::string by_global = global_only(module, name), by_stack = stack_global_only(module, name);
    expect_error([&] { unpickle(by_global); }, ErrorKind::Security,
                 {"x.pt", "forbidden global '" + full + "'", "never runs code", "D10", "byte 2)"});
    expect_error(
        [&] { unpickle(by_stack); }, ErrorKind::Security,
        {"x.pt", "forbidden global '" + full + "'", "byte " + std::to_string(by_stack.size() - 2) + ")"});
  }
  // Allowed by torch's own weights_only loader, but tensors probe cannot represent: refused as unsupported.
  for (const char* name : {"_rebuild_sparse_tensor", "_rebuild_qtensor", "_rebuild_nested_tensor",
                           "_rebuild_meta_tensor_no_storage", "_rebuild_wrapper_subclass",
                           "_rebuild_device_tensor_from_numpy", "_rebuild_device_tensor_from_cpu_tensor"}) {
    SCOPED_TRACE(name);
    expect_error([&] { unpickle(global_only("torch._utils", name)); }, ErrorKind::Unsupported,
                 {"x.pt", "is not supported"});
  }
}

TEST(PickleRobustness, MalformedStreams) {
  const std::pair<std::string, std::string> cases[] = {
      {"\x80\x02R."s, "underflow"},
      {"\x80\x02t."s, "MARK"},
      {"\x80\x02j\xff\xff\xff\xff."s, "memo index 4294967295"},
      {"\x80\x02]r\xff\xff\xff\xff."s, ""},  // storing at a huge index is fine...
      {"\x80\x02]q\x00h\x00"
       "a."s,
       "contains itself"},
      {"\x80\x02]q\x00]h\x00"
       "aq\x01h\x00h\x01"
       "a."s,
       "already inside"},
      {"\x80\x02X\xff\xff\xff\x7f"
       "abc."s,
       "runs past the end"},
      {"\x80\x02K\x01"s, "no STOP"},
      {"\x80\x02\xff."s, "opcode 0xff"},
      {"\x80\x02\x8a\x09\0\0\0\0\0\0\0\0\0."s, "64 bits"},
      {"\x80\x02."s, "empty stack"},
  };
  for (const auto& [p, what] : cases) {
    SCOPED_TRACE(what);
    if (what.empty()) {
      EXPECT_TRUE(unpickle(p).empty());
      continue;
    }
    try {
      unpickle(p);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(e.kind(), ErrorKind::Internal);
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("x.pt"), std::string::npos) << e.what();
    }
  }
}

TEST(PickleRobustness, DeepNestingIsBounded) {
  // 100000 nested lists: refused at the depth limit instead of overflowing the C++ stack.
  std::string p = "\x80\x02";
  p += std::string(100000, ']') + std::string(99999, 'a') + ".";
  expect_error([&] { unpickle(p); }, ErrorKind::Format, {"nested deeper"});
  // Shared subtrees (each tuple holds the previous one twice) would take 2^200 steps to walk.
  std::string q =
      "\x80\x02"
      "N";
  for (int k = 0; k < 200; ++k) q += "\x32\x86";  // DUP, TUPLE2
  q += ".";
  expect_error([&] { unpickle(q); }, ErrorKind::Format, {"too large"});
}

TEST(PickleRobustness, TensorsThatReachPastTheirStorage) {
  // 6-element storage; these views need more.
  expect_error([] { unpickle(tensor_pickle("(K\x03K\x03t", "(K\x03K\x01t")); }, ErrorKind::Format,
               {"reaches element"});
  expect_error([] { unpickle(tensor_pickle("(K\x02K\x03t", "(K\x03K\x01t", 1)); }, ErrorKind::Format,
               {"reaches element"});
  expect_error(
      [] {
        unpickle(tensor_pickle("(K\x02t",
                               "(J\xff\xff\xff\x7f"
                               "t"));
      },
      ErrorKind::Format, {"reaches element"});
  expect_error(
      [] { unpickle(tensor_pickle("(\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x3fK\x04t", "(K\x04K\x01t")); },
      ErrorKind::Format, {"x.pt"});
  // The storage claims more elements than its 24-byte record holds.
  expect_error([] { unpickle(tensor_pickle("(K\x02t", "(K\x01t", 0, 100)); }, ErrorKind::Format,
               {"claims 100 elements"});
  expect_error([] { unpickle(tensor_pickle("(K\x02K\x03t", "(K\x03t")); }, ErrorKind::Format,
               {"equal length"});
}

}  // namespace
}  // namespace probe

namespace probe {
namespace {

// Found by probe_fuzz_npy: a Fortran-order header with a 0 dimension beside huge ones overflowed
// the stride computation (signed overflow); such an array is simply empty.
TEST(FuzzRegressions, FortranOrderWithZeroAndHugeDims) {
  test::TempDir dir;
  std::string f = npy_with_header(
      "{'descr': '>f8', 'fortran_order': True, 'shape': (0, 3727777, 7777772, 37277777777777), }");
  Tensor t = load_npy(dir.file("fz.npy", f));
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.shape(), (Shape{0, 3727777, 7777772, 37277777777777}));
  // The same shape through the pickle VM.
  auto v = unpickle(tensor_pickle("(K\x00\x8a\x06\x00\x00\x00\x00\x00\x01\x8a\x06\x00\x00\x00\x00\x00\x01t"s,
                                  "(K\x01K\x01K\x01t"s));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].tensor.numel(), 0);
}

}  // namespace
}  // namespace probe

namespace probe {
namespace {

// Found by probe_fuzz_npy: the zip-bomb bound trusted the declared compressed size, so a tiny
// archive claiming 3.6 GB compressed could make the reader allocate 3.6 GB.
TEST(FuzzRegressions, DeclaredCompressedSizeBeyondTheArchive) {
  test::TempDir dir;
  std::string npy = slurp(tensors_dir() + "npy_float32.npy");
  Member m = deflated("a.npy", npy);
  std::string z = make_zip({m});
  std::size_t cd = z.rfind("PK\x01\x02"s);
  z[cd + 23] = '\x70';  // compressed size ~1.9 GB
  z[cd + 27] = '\x70';  // uncompressed size likewise
  expect_error([&] { load_npz(dir.file("fz.npz", z)); }, ErrorKind::Format, {"fz.npz"});
}

// Address space this process has mapped, from /proc/self/statm (pages).
std::uint64_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Loads the archive of DeclaredCompressedSizeBeyondTheArchive with the address space capped at 512 MiB above
// what is mapped now, and prints one line saying what happened; the exit code is 0 only for the refusal.
int load_lying_archive_under_a_memory_cap() {
  test::TempDir dir;
  std::string z = make_zip({deflated("a.npy", slurp(tensors_dir() + "npy_float32.npy"))});
  const std::size_t cd = z.rfind("PK\x01\x02"s);
  z[cd + 23] = '\x70';  // compressed size ~1.9 GB
  z[cd + 27] = '\x70';  // uncompressed size likewise
  const std::string path = dir.file("fz.npz", z);
  rlimit cap{};
  cap.rlim_cur = cap.rlim_max = mapped_bytes() + (std::uint64_t{512} << 20);
  if (::setrlimit(RLIMIT_AS, &cap) != 0) {
    std::fprintf(stderr, "setrlimit: %s\n", std::strerror(errno));
    return 2;
  }
  try {
    load_npz(path);
    std::fprintf(stderr, "loaded\n");
    return 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "refused: %s in %s: %s\n", std::string(to_string(e.kind())).c_str(),
                 std::filesystem::path(e.file()).filename().string().c_str(), e.message().c_str());
    return e.kind() == ErrorKind::Format ? 0 : 1;
  } catch (const std::exception& e) {  // std::bad_alloc: the member's buffer was asked for
    std::fprintf(stderr, "exception: %s\n", e.what());
    return 1;
  }
}

// The lying member is refused for its compressed size, before any buffer sized by it exists: a child
// process (re-executed, so no thread of this one is missing in it) caps its address space well below the
// ~1.9 GB the member declares, so reaching the allocation would end in std::bad_alloc, not in the refusal.
TEST(FuzzRegressions, DeclaredCompressedSizeIsRefusedForItsReasonBeforeAllocating) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(load_lying_archive_under_a_memory_cap()), ::testing::ExitedWithCode(0),
              "refused: format error in fz.npz: member claims 18[0-9]{8} compressed bytes in an archive of "
              "[0-9]+\n");
}

}  // namespace
}  // namespace probe

namespace probe {
namespace {

std::string faults_dir() { return std::string(PROBE_TEST_DATA_DIR) + "/faults/"; }

// Peak resident set of this process so far, in MiB.
long peak_rss_mib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// A 4.5 KB .pt whose data.pkl inflates to 4 MiB of NONE opcodes (a list of 4M None, make_fault_fixtures.py)
// used to build 4M objects (2.3 GB) before failing; the opcode walk refuses it before building any.
TEST(ResourceLimits, PickleBeyondTheObjectOrOperationLimitIsRefusedBeforeUnpickling) {
  const long before = peak_rss_mib();
  for (const bool headers_only : {false, true}) {
    SCOPED_TRACE(headers_only ? "header" : "load");
    expect_error(
        [&] {
          if (headers_only)
            read_tensor_header(faults_dir() + "pt_pickle_ops.pt");
          else
            load_tensor_file(faults_dir() + "pt_pickle_ops.pt");
        },
        ErrorKind::Format, {"pt_pickle_ops.pt", "data.pkl", "more than 1048576 objects"});
  }
  EXPECT_LT(peak_rss_mib() - before, 64);
  // The operation limit: 2^21 DUP and POP opcodes create no object.
  std::string p = "\x80\x02N";
  for (int k = 0; k < 1 << 20; ++k) p += "20";
  expect_error([&] { unpickle(p + "."); }, ErrorKind::Format,
               {"x.pt", "more than 2097152 pickle operations"});
  p = "\x80\x02](" + std::string((1u << 20) + 1, 'N') + "e.";
  expect_error([&] { unpickle(p); }, ErrorKind::Format, {"x.pt", "more than 1048576 objects"});
  p = "\x80\x02](" + std::string(1u << 16, 'N') + "e.";
  EXPECT_TRUE(unpickle(p).empty());  // within the limits, and no tensor in it
}

// data.pkl of 17 MiB (deflated to 17 KB) is refused from the zip directory, naming the 16 MiB limit.
TEST(ResourceLimits, DataPklAboveSixteenMiBIsRefusedBeforeInflating) {
  expect_error([] { load_tensor_file(faults_dir() + "pt_pickle_large.pt"); }, ErrorKind::Format,
               {"pt_pickle_large.pt", "data.pkl", "17825798 bytes", "16 MiB"});
}

// A deflated .npz member of 64 MiB whose npy header says (3, 4) float32 (176 bytes) used to be inflated
// in full and read as that (3, 4) array; it is refused from its header before inflating the rest.
TEST(ResourceLimits, NpzMemberLargerThanItsHeaderSaysIsRefusedBeforeInflating) {
  const long before = peak_rss_mib();
  expect_error([] { load_npz(faults_dir() + "npz_inflate_bomb.npz"); }, ErrorKind::Format,
               {"npz_inflate_bomb.npz", "a.npy", "67108864 bytes", "declares 176", "refusing to inflate"});
  expect_error([] { load_npz_member(faults_dir() + "npz_inflate_bomb.npz", "a"); }, ErrorKind::Format,
               {"refusing to inflate"});
  EXPECT_LT(peak_rss_mib() - before, 32);
  // Honest deflated archives still load.
  EXPECT_EQ(load_npz_member(tensors_dir() + "npz_deflated.npz", "a").shape(), (Shape{3, 4}));
}

// torch.save of torch.zeros(1).expand(16384, 16384): 759 bytes that used to be materialised into 1 GiB.
// A view larger than its storage (elements repeated, stride 0) is materialised only up to 2^24
// elements; a view of more than 2^40 elements is no tensor at all.
TEST(ResourceLimits, ExpandedViewsAreBoundedByWhatTheirStorageHolds) {
  const long before = peak_rss_mib();
  expect_error([] { load_tensor_file(faults_dir() + "pt_expanded.pt"); }, ErrorKind::Unsupported,
               {"pt_expanded.pt", "(16384, 16384)", "storage of 1 elements", "stride 0", "16777216"});
  expect_error([] { read_tensor_header(faults_dir() + "pt_expanded.pt"); }, ErrorKind::Unsupported,
               {"pt_expanded.pt", "stride 0"});
  EXPECT_LT(peak_rss_mib() - before, 64);
  for (const bool headers_only : {false, true})
    expect_error(
        [&] {
          if (headers_only)
            read_tensor_header(faults_dir() + "pt_expanded_2e42.pt");
          else
            load_tensor_file(faults_dir() + "pt_expanded_2e42.pt");
        },
        ErrorKind::Format, {"pt_expanded_2e42.pt", "4398046511104 elements", "2^40"});
  // A small expanded view still loads: (4, 3) with stride (0, 1) over the 6-element storage repeats its
  // first row.
  auto v = unpickle(tensor_pickle("(K\x04K\x03t", "(K\x00K\x01t"s));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].tensor.shape(), (Shape{4, 3}));
}

}  // namespace
}  // namespace probe
