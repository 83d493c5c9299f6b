// An allow-listed unpickler for torch.save's data.pkl. It knows the pickle opcodes torch emits and
// only the globals needed to rebuild tensors and storages.
// DECISIONS D10: msprobe loads .pt with torch.load; probe rejects every other global (Security error)
// before anything is called, so loading a dump never runs code from it.
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

#include "io/TensorIo.h"

namespace probe::io {
namespace {

constexpr int kMaxDepth = 256;                // nesting of containers (Python's own limit is ~1000)
constexpr std::size_t kMaxVisits = 1u << 22;  // nodes visited when collecting tensors (shared subtrees)
// probe::Tensor is dense, so a view is materialised: its element count is what it costs, whatever its
// storage holds. Beyond 2^40 elements (4 TiB of bool) a view is no real tensor: a format error.
constexpr std::int64_t kMaxViewElements = std::int64_t{1} << 40;
// A view addressing more elements than its storage holds repeats elements (stride 0: torch's expand);
// msprobe saves contiguous clones, so such a view is materialised only up to this many elements.
constexpr std::int64_t kMaxExpandedElements = std::int64_t{1} << 24;

enum class Kind { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Global, Storage, Tensor };

struct Object;
using Obj = std::shared_ptr<Object>;

// What only storages and tensors carry, kept out of line: most objects of a pickle are numbers, strings
// and tuples, and the size of each bounds what a pickle within the object limit can allocate.
struct StorageOrTensor {
  // Storage
  StorageBytes bytes;
  std::optional<DType> dtype;  // empty: a storage class probe cannot represent (float8, ...)
  bool untyped = false;
  std::int64_t numel = 0;
  // Tensor (`tensor` stays empty when only headers are read)
  Tensor tensor;
  TensorHeader header;
};

struct Object {
  Kind kind = Kind::None;
  // Once inside a container an object may no longer be mutated: this makes cycles impossible and
  // keeps `depth` exact (a container's depth is final when it is added to another).
  bool sealed = false;
  int depth = 0;
  std::int64_t i = 0;
  double f = 0;
  std::string s, s2;                   // Str/Bytes: s; Global: module s, name s2
  std::vector<Obj> items;              // Tuple/List; Dict: key, value, key, value, ...
  std::unique_ptr<StorageOrTensor> x;  // Storage and Tensor only
};

// Storage classes by name (module torch, torch.cuda, ...): element type, or none if unsupported.
struct StorageClass {
  std::string_view name;
  std::optional<DType> dtype;
};
constexpr StorageClass kStorageClasses[] = {
    {"FloatStorage", DType::Float32},
    {"HalfStorage", DType::Float16},
    {"BFloat16Storage", DType::BFloat16},
    {"DoubleStorage", DType::Float64},
    {"ByteStorage", DType::UInt8},
    {"CharStorage", DType::Int8},
    {"ShortStorage", DType::Int16},
    {"IntStorage", DType::Int32},
    {"LongStorage", DType::Int64},
    {"BoolStorage", DType::Bool},
    {"ComplexFloatStorage", DType::Complex64},
    {"ComplexDoubleStorage", DType::Complex128},
    {"UInt16Storage", DType::UInt16},
    {"UInt32Storage", DType::UInt32},
    {"UInt64Storage", DType::UInt64},
    {"UntypedStorage", DType::UInt8},
    {"Float8_e5m2Storage", std::nullopt},
    {"Float8_e4m3fnStorage", std::nullopt},
    {"Float8_e5m2fnuzStorage", std::nullopt},
    {"Float8_e4m3fnuzStorage", std::nullopt},
    {"QInt8Storage", std::nullopt},
    {"QUInt8Storage", std::nullopt},
    {"QInt32Storage", std::nullopt},
    {"QUInt4x2Storage", std::nullopt},
    {"QUInt2x4Storage", std::nullopt},
};

// torch.<dtype> globals (pickled torch.dtype objects, used by _rebuild_tensor_v3).
constexpr std::string_view kDTypeNames[] = {
    "float16",
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
    "float8_e4m3fnuz",
};

// Callables the VM implements itself.
constexpr std::string_view kCallables[] = {
    "torch._utils._rebuild_tensor",
    "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_tensor_v3",
    "torch._utils._rebuild_parameter",
    "torch._utils._rebuild_parameter_with_state",
    "torch._tensor._rebuild_from_type_v2",
    "torch_npu.utils.storage._rebuild_npu_tensor",
    "collections.OrderedDict",
    "torch.Size",
    "torch.device",
};
// Harmless classes that may appear as arguments (the type argument of _rebuild_from_type_v2).
constexpr std::string_view kTypes[] = {"torch.Tensor", "torch.nn.parameter.Parameter"};
// Allowed by torch's weights_only loader, but tensors probe cannot represent.
constexpr std::string_view kUnsupported[] = {
    "torch._utils._rebuild_sparse_tensor",
    "torch._utils._rebuild_qtensor",
    "torch._utils._rebuild_nested_tensor",
    "torch._utils._rebuild_meta_tensor_no_storage",
    "torch._utils._rebuild_wrapper_subclass",
    "torch._utils._rebuild_device_tensor_from_numpy",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor",
    "torch.serialization._get_layout",
};

template <class C>
bool contains(const C& list, std::string_view s) {
  for (std::string_view x : list)
    if (x == s) return true;
  return false;
}

bool is_storage_module(std::string_view m) {
  return m == "torch" || m == "torch.cuda" || m == "torch.storage" || m == "torch_npu" || m == "torch.npu";
}

const StorageClass* storage_class(const Object& g) {
  if (g.kind != Kind::Global || !is_storage_module(g.s)) return nullptr;
  for (const StorageClass& c : kStorageClasses)
    if (c.name == g.s2) return &c;
  return nullptr;
}

// Walks the opcodes up to STOP without building anything and refuses a pickle with more operations or
// object-creating operations than the limits (TensorIo.h): a data.pkl of a few KB deflated must not make
// the VM allocate gigabytes before failing. A malformed or unknown opcode ends the walk; the VM then
// reports it with its position.
void check_pickle_bounds(std::string_view d, const std::string& file) {
  std::uint64_t ops = 0, objects = 0;
  std::size_t pos = 0;
  auto skip = [&](std::uint64_t n) {
    if (n > d.size() - pos) return false;
    pos += static_cast<std::size_t>(n);
    return true;
  };
  auto sized = [&](int width) {  // a length of `width` bytes, then that many bytes
    if (static_cast<std::size_t>(width) > d.size() - pos) return false;
    std::uint64_t n = 0;
    for (int k = width - 1; k >= 0; --k) n = (n << 8) | static_cast<unsigned char>(d[pos + k]);
    pos += static_cast<std::size_t>(width);
    return skip(n);
  };
  auto line = [&] {
    const std::size_t nl = d.find('\n', pos);
    if (nl == std::string_view::npos) return false;
    pos = nl + 1;
    return true;
  };
  auto refuse = [&](std::uint64_t limit, const char* what) {
    throw Error(ErrorKind::Format,
                "data.pkl holds more than " + std::to_string(limit) + " " + what +
                    ", the limit (the pickle of a 7B-parameter state_dict has 9.2K operations); refused "
                    "before unpickling",
                file, "data.pkl");
  };
  while (pos < d.size()) {
    const auto op = static_cast<unsigned char>(d[pos++]);
    if (++ops > kMaxPickleOps) refuse(kMaxPickleOps, "pickle operations");
    bool ok = true, creates = true;
    switch (op) {
      case '.':
        return;
      case '(':
      case '0':
      case '1':
      case '2':
      case 'a':
      case 'e':
      case 's':
      case 'u':
      case 'b':
      case 0x94:
        creates = false;
        break;
      case 'N':
      case 0x88:
      case 0x89:
      case ')':
      case ']':
      case '}':
      case 't':
      case 'l':
      case 'd':
      case 0x85:
      case 0x86:
      case 0x87:
      case 'R':
      case 0x81:
      case 'Q':
      case 0x93:
        break;
      case 0x80:
        creates = false;
        ok = skip(1);
        break;
      case 0x95:
        creates = false;
        ok = skip(8);
        break;
      case 'q':
      case 'h':
        creates = false;
        ok = skip(1);
        break;
      case 'r':
      case 'j':
        creates = false;
        ok = skip(4);
        break;
      case 'p':
      case 'g':
        creates = false;
        ok = line();
        break;
      case 'K':
        ok = skip(1);
        break;
      case 'M':
        ok = skip(2);
        break;
      case 'J':
        ok = skip(4);
        break;
      case 'G':
        ok = skip(8);
        break;
      case 'I':
      case 'L':
        ok = line();
        break;
      case 'c':
        ok = line() && line();
        break;
      case 0x8a:
      case 0x8c:
      case 'U':
      case 'C':
        ok = sized(1);
        break;
      case 0x8b:
      case 'X':
      case 'T':
      case 'B':
        ok = sized(4);
        break;
      case 0x8d:
      case 0x8e:
      case 0x96:
        ok = sized(8);
        break;
      default:
        return;  // forbidden or unknown: the VM says which
    }
    if (!ok) return;
    if (creates && ++objects > kMaxPickleObjects) refuse(kMaxPickleObjects, "objects");
  }
}

class Unpickler {
 public:
  Unpickler(std::string_view data, const StorageLoader& load, const std::string& file)
      : d_(data), load_(load), file_(file) {}

  Obj run() {
    check_pickle_bounds(d_, file_);
    while (true) {
      if (pos_ >= d_.size()) fail("truncated pickle (no STOP opcode)");
      op_at_ = pos_;
      auto op = static_cast<unsigned char>(d_[pos_++]);
      if (op == '.') break;
      step(op);
    }
    if (stack_.empty()) fail("STOP with an empty stack");
    return stack_.back();
  }

  // Calls `out(path, tensor object)` for each tensor of `o`, with its key path.
  template <typename Sink>
  void collect(const Obj& o, const std::string& prefix, Sink& out) {
    if (++visits_ > kMaxVisits) fail("object graph is too large");
    auto join = [&](const std::string& k) { return prefix.empty() ? k : prefix + "." + k; };
    switch (o->kind) {
      case Kind::Tensor:
        out(prefix, *o);
        break;
      case Kind::Tuple:
      case Kind::List:
        for (std::size_t k = 0; k < o->items.size(); ++k) collect(o->items[k], join(std::to_string(k)), out);
        break;
      case Kind::Dict:
        for (std::size_t k = 0; k + 1 < o->items.size(); k += 2) {
          const Object& key = *o->items[k];
          std::string name = key.kind == Kind::Str   ? key.s
                             : key.kind == Kind::Int ? std::to_string(key.i)
                                                     : "<key " + std::to_string(k / 2) + ">";
          collect(o->items[k + 1], join(name), out);
        }
        break;
      default:
        break;  // None, numbers, strings: not tensors
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what, ErrorKind kind = ErrorKind::Format) const {
    throw Error(kind, what + " (data.pkl byte " + std::to_string(op_at_) + ")", file_, "data.pkl");
  }

  // ---- reading operands
  std::string_view take(std::uint64_t n) {
    if (n > d_.size() - pos_)
      fail("truncated pickle: operand of " + std::to_string(n) + " bytes runs past the end");
    std::string_view v = d_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  std::uint64_t uint_le(int n) {
    std::string_view b = take(static_cast<std::uint64_t>(n));
    std::uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(b[k]);
    return v;
  }
  std::string_view line() {
    std::size_t nl = d_.find('\n', pos_);
    if (nl == std::string_view::npos) fail("truncated pickle: unterminated text operand");
    std::string_view v = d_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return v;
  }

  // ---- objects
  Obj make(Kind k) {
    if (++objects_ > kMaxPickleObjects) fail("too many objects");
    auto o = std::make_shared<Object>();
    o->kind = k;
    return o;
  }
  Obj make_int(std::int64_t v) {
    Obj o = make(Kind::Int);
    o->i = v;
    return o;
  }
  Obj make_str(Kind k, std::string_view s) {
    Obj o = make(k);
    o->s = std::string(s);
    return o;
  }

  void push(Obj o) { stack_.push_back(std::move(o)); }
  Obj pop() {
    if (stack_.size() <= floor()) fail("stack underflow");
    Obj o = std::move(stack_.back());
    stack_.pop_back();
    return o;
  }
  Obj& top() {
    if (stack_.size() <= floor()) fail("stack underflow");
    return stack_.back();
  }
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<Obj> pop_mark() {
    if (marks_.empty()) fail("MARK expected but none is open");
    std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Obj> items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
                           std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return items;
  }
  // Makes `child` part of `parent`; parent must still be mutable.
  void adopt(Object& parent, const Obj& child) {
    if (parent.sealed) fail("mutation of an object that is already inside another one");
    if (child.get() == &parent) fail("object contains itself");
    child->sealed = true;
    if (child->depth + 1 > kMaxDepth) fail("objects nested deeper than " + std::to_string(kMaxDepth));
    parent.depth = std::max(parent.depth, child->depth + 1);
    parent.items.push_back(child);
  }
  Obj make_tuple(std::vector<Obj> items) {
    Obj t = make(Kind::Tuple);
    for (const Obj& c : items) adopt(*t, c);
    return t;
  }
  Obj& memo_get(std::uint64_t k) {
    auto it = memo_.find(k);
    if (it == memo_.end()) fail("memo index " + std::to_string(k) + " was never stored");
    return it->second;
  }

  Obj global(std::string module, std::string name) {
    std::string full = module + "." + name;
    Obj g = make(Kind::Global);
    g->s = std::move(module);
    g->s2 = std::move(name);
    if (contains(kCallables, full) || contains(kTypes, full) || storage_class(*g)) return g;
    if (g->s == "torch" && contains(kDTypeNames, g->s2)) return g;
    if (contains(kUnsupported, full))
      fail("'" + full + "' (sparse, quantized, nested or device-only tensors) is not supported",
           ErrorKind::Unsupported);
    fail("forbidden global '" + full +
             "': probe only rebuilds tensors and never runs code from a file "
             "(DECISIONS D10)",
         ErrorKind::Security);
  }

  // ---- torch semantics
  Obj persistent_load(const Obj& pid) {
    // ('storage', <storage class>, key, location, numel)
    if (pid->kind != Kind::Tuple || pid->items.size() != 5 || pid->items[0]->kind != Kind::Str ||
        pid->items[0]->s != "storage")
      fail("persistent id is not a ('storage', class, key, location, numel) tuple");
    const StorageClass* cls = storage_class(*pid->items[1]);
    const Object& key = *pid->items[2];
    const Object& numel = *pid->items[4];
    if (!cls || key.kind != Kind::Str || numel.kind != Kind::Int || numel.i < 0)
      fail("malformed storage persistent id");
    if (!cls->dtype)
      fail("storage class '" + std::string(cls->name) + "' is not supported", ErrorKind::Unsupported);
    Obj st = make(Kind::Storage);
    st->x = std::make_unique<StorageOrTensor>();
    StorageOrTensor& sx = *st->x;
    sx.dtype = cls->dtype;
    sx.untyped = cls->name == "UntypedStorage";
    sx.numel = numel.i;
    auto cached = storages_.find(key.s);
    const std::size_t es = itemsize(*sx.dtype);
    if (static_cast<std::uint64_t>(sx.numel) > std::numeric_limits<std::uint64_t>::max() / es)
      fail("storage '" + key.s + "' claims an impossible element count");
    const std::uint64_t needed = static_cast<std::uint64_t>(sx.numel) * es;
    if (cached == storages_.end()) cached = storages_.emplace(key.s, load_(key.s, needed)).first;
    sx.bytes = cached->second;
    if (static_cast<std::uint64_t>(sx.numel) > sx.bytes.size / es)
      fail("storage '" + key.s + "' claims " + std::to_string(sx.numel) + " elements of " +
           std::string(name(*sx.dtype)) + " but its record has " + std::to_string(sx.bytes.size) + " bytes");
    st->s = key.s;
    return st;
  }

  static bool is_int_tuple(const Object& o) {
    if (o.kind != Kind::Tuple) return false;
    for (const Obj& c : o.items)
      if (c->kind != Kind::Int || c->i < 0) return false;
    return true;
  }

  Obj rebuild_tensor(const std::vector<Obj>& a, std::optional<DType> dtype_arg) {
    if (a.size() < 4) fail("tensor rebuild needs (storage, offset, size, stride, ...)");
    const Object& st = *a[0];
    if (st.kind != Kind::Storage) fail("tensor rebuild: first argument is not a storage");
    if (a[1]->kind != Kind::Int || a[1]->i < 0) fail("tensor rebuild: bad storage offset");
    if (!is_int_tuple(*a[2]) || !is_int_tuple(*a[3]) || a[2]->items.size() != a[3]->items.size())
      fail("tensor rebuild: size and stride must be tuples of non-negative ints of equal length");
    const StorageOrTensor& sx = *st.x;
    DType dtype = dtype_arg ? *dtype_arg : *sx.dtype;
    const std::size_t es = itemsize(dtype);
    const std::uint64_t st_bytes = static_cast<std::uint64_t>(sx.numel) * itemsize(*sx.dtype);
    const std::uint64_t capacity = st_bytes / es;  // elements of `dtype` in the storage
    Shape shape;
    std::vector<std::int64_t> strides;
    for (const Obj& c : a[2]->items) shape.push_back(c->i);
    for (const Obj& c : a[3]->items) strides.push_back(c->i);
    std::int64_t n;
    try {
      n = numel(shape);
    } catch (const Error& e) {
      fail(e.message());
    }
    if (n > kMaxViewElements)
      fail("tensor rebuild: a view of shape " + shape_to_string(shape) + " has " + std::to_string(n) +
           " elements, above the limit of 2^40 for any tensor");
    if (static_cast<std::uint64_t>(n) > capacity && n > kMaxExpandedElements)
      fail("tensor rebuild: a view of shape " + shape_to_string(shape) + " (" + std::to_string(n) +
               " elements) over a storage of " + std::to_string(capacity) +
               " elements repeats elements (stride 0); probe materialises views, and refuses one above " +
               std::to_string(kMaxExpandedElements) + " elements that its storage does not hold",
           ErrorKind::Unsupported);
    const std::int64_t offset = a[1]->i;
    std::int64_t last = offset;  // index of the last element addressed
    bool contiguous = true;
    std::int64_t expect = 1;
    for (std::size_t k = shape.size(); k-- > 0 && n > 0;) {
      // n > 0: no dimension is 0, so `expect` (a partial product of dims) cannot overflow.
      if (shape[k] != 1 && strides[k] != expect) contiguous = false;
      expect *= shape[k];
      {
        std::int64_t span;
        if (__builtin_mul_overflow(shape[k] - 1, strides[k], &span) ||
            __builtin_add_overflow(last, span, &last))
          fail("tensor rebuild: strides overflow");
      }
    }
    if (n > 0 && static_cast<std::uint64_t>(last) >= capacity)
      fail("tensor of shape " + shape_to_string(shape) + " at offset " + std::to_string(offset) +
           " reaches element " + std::to_string(last) + " of a storage with " + std::to_string(capacity));
    if (n == 0 && static_cast<std::uint64_t>(offset) > capacity)
      fail("tensor rebuild: offset beyond storage");
    Obj t = make(Kind::Tensor);
    t->x = std::make_unique<StorageOrTensor>();
    StorageOrTensor& tx = *t->x;
    tx.header = {dtype, shape};
    if (!sx.bytes.buf) return t;  // headers only: the storage record was checked but not read
    const std::size_t start = sx.bytes.offset + static_cast<std::size_t>(offset) * es;
    if (contiguous)
      tx.tensor = Tensor::from_storage(dtype, shape, sx.bytes.buf, start);
    else
      tx.tensor = materialise(dtype, shape, strides, sx.bytes.buf->data() + start);
    tx.tensor = normalise_bool(std::move(tx.tensor));
    return t;
  }

  Obj call(const Obj& fn, const Obj& args) {
    if (fn->kind != Kind::Global) fail("REDUCE on something that is not an allowed function");
    if (args->kind != Kind::Tuple) fail("REDUCE arguments are not a tuple");
    const std::string full = fn->s + "." + fn->s2;
    const std::vector<Obj>& a = args->items;
    if (full == "torch._utils._rebuild_tensor" || full == "torch._utils._rebuild_tensor_v2" ||
        full == "torch_npu.utils.storage._rebuild_npu_tensor")
      return rebuild_tensor(a, std::nullopt);
    if (full == "torch._utils._rebuild_tensor_v3") {
      if (a.size() < 7 || a[6]->kind != Kind::Global || a[6]->s != "torch")
        fail("_rebuild_tensor_v3 needs a dtype");
      auto dt = parse_dtype("torch." + a[6]->s2);
      if (!dt) fail("dtype torch." + a[6]->s2 + " is not supported", ErrorKind::Unsupported);
      return rebuild_tensor(a, dt);
    }
    if (full == "torch._utils._rebuild_parameter" || full == "torch._utils._rebuild_parameter_with_state") {
      if (a.empty() || a[0]->kind != Kind::Tensor) fail("parameter rebuild without a tensor");
      return a[0];
    }
    if (full == "torch._tensor._rebuild_from_type_v2") {
      if (a.size() < 3) fail("_rebuild_from_type_v2 needs (func, type, args, state)");
      return call(a[0], a[2]);
    }
    if (full == "collections.OrderedDict") {
      Obj dict = make(Kind::Dict);
      if (!a.empty()) {
        if (a.size() != 1 || (a[0]->kind != Kind::List && a[0]->kind != Kind::Tuple))
          fail("OrderedDict() with unexpected arguments");
        for (const Obj& pair : a[0]->items) {
          if (pair->kind != Kind::Tuple || pair->items.size() != 2) fail("OrderedDict item is not a pair");
          adopt(*dict, pair->items[0]);
          adopt(*dict, pair->items[1]);
        }
      }
      return dict;
    }
    if (full == "torch.Size") {
      if (a.size() != 1 || !is_int_tuple(*a[0])) fail("torch.Size() with unexpected arguments");
      return a[0];
    }
    if (full == "torch.device") return a.empty() ? make(Kind::None) : a[0];
    fail("'" + full + "' cannot be called", ErrorKind::Security);
  }

  void step(unsigned char op) {
    switch (op) {
      case 0x80:
        take(1);
        break;      // PROTO
      case 0x95: {  // FRAME: a length hint only
        std::uint64_t n = uint_le(8);
        if (n > d_.size() - pos_) fail("frame runs past the end");
        break;
      }
      case '(':
        marks_.push_back(stack_.size());
        break;
      case '0':
        pop();
        break;
      case '1':
        pop_mark();
        break;
      case '2':
        push(top());
        break;
      case 'N':
        push(make(Kind::None));
        break;
      case 0x88:
      case 0x89: {
        Obj o = make(Kind::Bool);
        o->i = op == 0x88;
        push(o);
        break;
      }
      case 'J':
        push(make_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(uint_le(4)))));
        break;
      case 'K':
        push(make_int(static_cast<std::int64_t>(uint_le(1))));
        break;
      case 'M':
        push(make_int(static_cast<std::int64_t>(uint_le(2))));
        break;
      case 0x8a:
      case 0x8b: {  // LONG1 / LONG4: little-endian two's complement
        std::uint64_t n = op == 0x8a ? uint_le(1) : uint_le(4);
        if (n > 8) fail("integer wider than 64 bits", ErrorKind::Unsupported);
        std::string_view b = take(n);
        std::uint64_t v = 0;
        for (std::size_t k = n; k-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[k]);
        if (n > 0 && n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80))
          v |= ~std::uint64_t{0} << (8 * n);
        push(make_int(static_cast<std::int64_t>(v)));
        break;
      }
      case 'I':
      case 'L': {  // text INT / LONG (protocol 0), also I01/I00 booleans
        std::string_view t = line();
        if (!t.empty() && t.back() == 'L') t.remove_suffix(1);
        if (t == "01" || t == "00") {
          Obj o = make(Kind::Bool);
          o->i = t == "01";
          push(o);
          break;
        }
        std::int64_t v = 0;
        bool neg = !t.empty() && t[0] == '-';
        if (neg) t.remove_prefix(1);
        if (t.empty() || t.size() > 18) fail("bad or too large text integer");
        for (char c : t) {
          if (c < '0' || c > '9') fail("bad text integer");
          v = v * 10 + (c - '0');
        }
        push(make_int(neg ? -v : v));
        break;
      }
      case 'G': {
        std::uint64_t bits = 0;
        std::string_view b = take(8);
        for (char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);  // big endian
        Obj o = make(Kind::Float);
        std::memcpy(&o->f, &bits, 8);
        push(o);
        break;
      }
      case 'X':
        push(make_str(Kind::Str, take(uint_le(4))));
        break;
      case 0x8c:
        push(make_str(Kind::Str, take(uint_le(1))));
        break;
      case 0x8d:
        push(make_str(Kind::Str, take(uint_le(8))));
        break;
      case 'U':
        push(make_str(Kind::Str, take(uint_le(1))));
        break;  // SHORT_BINSTRING (Python 2 str)
      case 'T':
        push(make_str(Kind::Str, take(uint_le(4))));
        break;  // BINSTRING
      case 'B':
        push(make_str(Kind::Bytes, take(uint_le(4))));
        break;
      case 'C':
        push(make_str(Kind::Bytes, take(uint_le(1))));
        break;
      case 0x8e:
      case 0x96:
        push(make_str(Kind::Bytes, take(uint_le(8))));
        break;
      case ')':
        push(make(Kind::Tuple));
        break;
      case 't':
        push(make_tuple(pop_mark()));
        break;
      case 0x85: {
        Obj a = pop();
        push(make_tuple({a}));
        break;
      }
      case 0x86: {
        Obj b = pop(), a = pop();
        push(make_tuple({a, b}));
        break;
      }
      case 0x87: {
        Obj c = pop(), b = pop(), a = pop();
        push(make_tuple({a, b, c}));
        break;
      }
      case ']':
        push(make(Kind::List));
        break;
      case 'l': {
        std::vector<Obj> items = pop_mark();
        Obj l = make(Kind::List);
        for (const Obj& c : items) adopt(*l, c);
        push(l);
        break;
      }
      case 'a': {
        Obj v = pop();
        Obj& l = top();
        if (l->kind != Kind::List) fail("APPEND to a non-list");
        adopt(*l, v);
        break;
      }
      case 'e': {
        std::vector<Obj> items = pop_mark();
        Obj& l = top();
        if (l->kind != Kind::List) fail("APPENDS to a non-list");
        for (const Obj& c : items) adopt(*l, c);
        break;
      }
      case '}':
        push(make(Kind::Dict));
        break;
      case 'd': {
        std::vector<Obj> items = pop_mark();
        if (items.size() % 2) fail("DICT with an odd number of items");
        Obj dct = make(Kind::Dict);
        for (const Obj& c : items) adopt(*dct, c);
        push(dct);
        break;
      }
      case 's': {
        Obj v = pop(), k = pop();
        Obj& dct = top();
        if (dct->kind != Kind::Dict) fail("SETITEM on a non-dict");
        adopt(*dct, k);
        adopt(*dct, v);
        break;
      }
      case 'u': {
        std::vector<Obj> items = pop_mark();
        if (items.size() % 2) fail("SETITEMS with an odd number of items");
        Obj& dct = top();
        if (dct->kind != Kind::Dict) fail("SETITEMS on a non-dict");
        for (const Obj& c : items) adopt(*dct, c);
        break;
      }
      case 'c': {
        std::string module(line()), name(line());
        push(global(std::move(module), std::move(name)));
        break;
      }
      case 0x93: {
        Obj name = pop(), module = pop();
        if (name->kind != Kind::Str || module->kind != Kind::Str) fail("STACK_GLOBAL needs two strings");
        push(global(module->s, name->s));
        break;
      }
      case 'R': {
        Obj args = pop(), fn = pop();
        push(call(fn, args));
        break;
      }
      case 0x81: {  // NEWOBJ cls(*args): only OrderedDict is a class probe builds
        Obj args = pop(), cls = pop();
        if (cls->kind != Kind::Global || cls->s + "." + cls->s2 != "collections.OrderedDict")
          fail("NEWOBJ of a class probe does not build", ErrorKind::Unsupported);
        push(make(Kind::Dict));
        break;
      }
      case 'b': {  // BUILD: set state; tensors and dicts carry nothing probe needs in it
        pop();
        Obj& o = top();
        if (o->kind != Kind::Tensor && o->kind != Kind::Dict) fail("BUILD on an unsupported object");
        break;
      }
      case 'Q':
        push(persistent_load(pop()));
        break;
      case 'q':
        memo_[uint_le(1)] = top();
        break;
      case 'r':
        memo_[uint_le(4)] = top();
        break;
      case 0x94:
        memo_[memo_.size()] = top();
        break;
      case 'h':
        push(memo_get(uint_le(1)));
        break;
      case 'j':
        push(memo_get(uint_le(4)));
        break;
      case 'p':
      case 'g': {  // text PUT / GET
        std::string_view t = line();
        if (t.empty() || t.size() > 9) fail("bad memo key");
        std::uint64_t k = 0;
        for (char c : t) {
          if (c < '0' || c > '9') fail("bad memo key");
          k = k * 10 + static_cast<std::uint64_t>(c - '0');
        }
        if (op == 'p')
          memo_[k] = top();
        else
          push(memo_get(k));
        break;
      }
      case 'i': {  // INST module name: builds an arbitrary class; never used by torch
        std::string module(line()), name(line());
        fail("forbidden opcode INST of '" + module + "." + name + "' (DECISIONS D10)", ErrorKind::Security);
      }
      case 'o':
        fail("forbidden opcode OBJ (DECISIONS D10)", ErrorKind::Security);
      case 0x82:
      case 0x83:
      case 0x84:
        fail("forbidden extension-registry opcode (DECISIONS D10)", ErrorKind::Security);
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail(std::string("unsupported pickle opcode ") + hex);
      }
    }
  }

  std::string_view d_;
  const StorageLoader& load_;
  const std::string& file_;
  std::size_t pos_ = 0, op_at_ = 0, objects_ = 0, visits_ = 0;
  std::vector<Obj> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Obj> memo_;
  std::unordered_map<std::string, StorageBytes> storages_;
};

}  // namespace

std::vector<NamedTensor> unpickle_tensors(std::string_view pickle, const StorageLoader& load,
                                          const std::string& file) {
  Unpickler vm(pickle, load, file);
  Obj root = vm.run();
  std::vector<NamedTensor> out;
  auto sink = [&](const std::string& path, const Object& t) { out.push_back({path, t.x->tensor}); };
  vm.collect(root, "", sink);
  return out;
}

std::vector<std::pair<std::string, TensorHeader>> unpickle_tensor_headers(std::string_view pickle,
                                                                          const StorageLoader& load,
                                                                          const std::string& file) {
  Unpickler vm(pickle, load, file);
  Obj root = vm.run();
  std::vector<std::pair<std::string, TensorHeader>> out;
  auto sink = [&](const std::string& path, const Object& t) { out.emplace_back(path, t.x->header); };
  vm.collect(root, "", sink);
  return out;
}

}  // namespace probe::io
