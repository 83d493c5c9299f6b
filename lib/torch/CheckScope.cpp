// probe::torch::CheckScope: observes the aten ops of a LibTorch program through ATen's RecordFunction
// callbacks.
//
// Why RecordFunction and not a dispatcher fallback: in LibTorch 1.13 a boxed fallback registered for a
// dispatch key (the C++ side of TorchDispatchMode) must redispatch every op itself and sees inputs but has
// to compute the outputs by calling the kernel again; the Python dispatch key that TorchDispatchMode uses
// needs a Python interpreter. A thread-local RecordFunction callback with needsInputs/needsOutputs is the
// supported C++ hook: the dispatcher calls it for every op on this thread (and autograd runs CPU backward
// ops on the thread that called backward(), carrying the callback along), with the op's schema, its boxed
// inputs at start and its outputs at end, and it costs nothing on threads without a scope.
//
// DECISIONS D8 (LibTorch adapter). What a user sees differs from TorchDispatchMode in one way: RecordFunction
// also reports composite ops (aten::linear) before their pieces (aten::t, aten::addmm). The scope checks the
// outermost op that probe can bench and ignores what runs inside it; an op without a probe runner is looked
// into, and counted as "decomposed" when something inside it was checked, "unsupported" when nothing was.
#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/graph_task.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>

#include "io/TensorIo.h"
#include "probe/error.h"
#include "probe/online_client.h"
#include "probe/runner.h"
#include "probe/torch.h"
#include "support/DataFiles.h"

namespace probe::torch {
namespace {

DType probe_dtype(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Bool:
      return DType::Bool;
    case c10::ScalarType::Byte:
      return DType::UInt8;
    case c10::ScalarType::Char:
      return DType::Int8;
    case c10::ScalarType::Short:
      return DType::Int16;
    case c10::ScalarType::Int:
      return DType::Int32;
    case c10::ScalarType::Long:
      return DType::Int64;
    case c10::ScalarType::Half:
      return DType::Float16;
    case c10::ScalarType::BFloat16:
      return DType::BFloat16;
    case c10::ScalarType::Float:
      return DType::Float32;
    case c10::ScalarType::Double:
      return DType::Float64;
    case c10::ScalarType::ComplexFloat:
      return DType::Complex64;
    case c10::ScalarType::ComplexDouble:
      return DType::Complex128;
    default:
      throw Error(ErrorKind::Unsupported, std::string("dtype ") + c10::toString(t) + " has no probe dtype");
  }
}

// Whether probe_dtype() has a probe dtype for `t` (without throwing: the count-only path asks per op).
bool has_probe_dtype(c10::ScalarType t) noexcept {
  switch (t) {
    case c10::ScalarType::Bool:
    case c10::ScalarType::Byte:
    case c10::ScalarType::Char:
    case c10::ScalarType::Short:
    case c10::ScalarType::Int:
    case c10::ScalarType::Long:
    case c10::ScalarType::Half:
    case c10::ScalarType::BFloat16:
    case c10::ScalarType::Float:
    case c10::ScalarType::Double:
    case c10::ScalarType::ComplexFloat:
    case c10::ScalarType::ComplexDouble:
      return true;
    default:
      return false;
  }
}

void check_viewable(const at::Tensor& t) {
  if (!t.defined()) throw Error(ErrorKind::Unsupported, "undefined tensor");
  if (!t.is_cpu()) throw Error(ErrorKind::Unsupported, "tensor not on the CPU");
  if (t.layout() != c10::kStrided)
    throw Error(ErrorKind::Unsupported, "tensor is not strided (sparse/mkldnn)");
  if (t.is_conj() || t.is_neg())
    throw Error(ErrorKind::Unsupported, "tensor has a lazy conjugate/negative bit");
  if (t.numel() > 0 && !t.has_storage()) throw Error(ErrorKind::Unsupported, "tensor has no storage");
}

// A tensor's memory lent to the scope's client (online::LentStorage): read in place by the client's I/O
// thread when it encodes the record. It holds the torch storage, not the tensor: a reference to the tensor
// would make autograd clone a gradient it can otherwise take over (AccumulateGrad counts the tensor's
// references). The tensor's version counter tells whether an in-place op the scope did not observe (on
// another thread) changed it before the client read it.
class TorchLent final : public online::LentStorage {
 public:
  TorchLent(const at::Tensor& t, DType dtype, Shape shape, std::vector<std::int64_t> strides)
      : LentStorage(t.nbytes(), strides.empty() ? static_cast<const std::byte*>(t.data_ptr()) : nullptr),
        storage_(t.storage()),
        storage_data_(storage_.data()),
        base_(static_cast<const std::byte*>(t.data_ptr())),
        dtype_(dtype),
        shape_(std::move(shape)),
        strides_(std::move(strides)),
        version_(t.unsafeGetTensorImpl()->version_counter()),
        lent_version_(version_.enabled() ? version_.current_version() : 0) {}

 protected:
  std::shared_ptr<Storage> copy_lent() const override {
    const Tensor copy = strides_.empty()
                            ? io::materialise(DType::UInt8, {static_cast<std::int64_t>(size())}, {1}, base_)
                            : io::materialise(dtype_, shape_, strides_, base_);
    return copy.storage();
  }
  // A storage resized elsewhere may have new memory (and the old freed): that counts as changed too.
  bool lent_unchanged() const noexcept override {
    return storage_.data() == storage_data_ &&
           (!version_.enabled() || version_.current_version() == lent_version_);
  }
  void release_lent() noexcept override {
    storage_ = c10::Storage();
    version_ = c10::VariableVersion();
  }

 private:
  c10::Storage storage_;
  const void* storage_data_;
  const std::byte* base_;
  DType dtype_;
  Shape shape_;
  std::vector<std::int64_t> strides_;  // empty: contiguous
  c10::VariableVersion version_;
  std::uint32_t lent_version_;
};

// A copy the scope already took (a written argument's value before the op) handed to the client as lent
// memory, so that the client does not copy it again; it never changes.
class KeptCopy final : public online::LentStorage {
 public:
  explicit KeptCopy(const Tensor& copy) : LentStorage(copy.nbytes(), copy.bytes()), copy_(copy) {}

 protected:
  std::shared_ptr<Storage> copy_lent() const override {
    return io::materialise(DType::UInt8, {static_cast<std::int64_t>(size())}, {1}, copy_->bytes()).storage();
  }
  void release_lent() noexcept override { copy_.reset(); }

 private:
  std::optional<Tensor> copy_;
};

Value kept_value(const Value& v) {
  if (v.is_tensor())
    return Value(
        Tensor::from_storage(v.tensor().dtype(), v.tensor().shape(), std::make_shared<KeptCopy>(v.tensor())));
  return v;
}

// The torch storage stays alive as long as a probe tensor views it.
class BorrowedStorage final : public Storage {
 public:
  explicit BorrowedStorage(at::Tensor t) : t_(std::move(t)) {}
  std::byte* data() noexcept override { return static_cast<std::byte*>(t_.data_ptr()); }
  std::size_t size() const noexcept override { return t_.nbytes(); }

 private:
  at::Tensor t_;
};

// ---- the black list and per-op facts ----

std::vector<std::string> read_list(const std::string& file, const char* member) {
  const std::string path = detail::data_file_path(file);
  const rapidjson::Document doc = detail::parse_data_json(path, "torch black list");
  const rapidjson::Value& root = doc;
  if (!root.IsObject() || !root.HasMember(member) || !root[member].IsArray())
    throw Error(ErrorKind::Format, "expected an array of op names", path, member);
  std::vector<std::string> out;
  for (const auto& v : root[member].GetArray()) {
    if (!v.IsString()) throw Error(ErrorKind::Format, "expected strings", path, member);
    out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

// The shipped black lists, read once per process (a scope per training step must not re-read them).
const std::set<std::string>& shipped_black_list() {
  static const std::set<std::string> black = [] {
    std::set<std::string> out;
    for (auto& name : read_list("online_dispatch.json", "aten_ops_blacklist")) out.insert(std::move(name));
    for (auto& name : read_list("torch_check_scope.json", "black_list")) out.insert(std::move(name));
    return out;
  }();
  return black;
}

const RunnerRegistry& builtin_registry() {
  static const RunnerRegistry r = RunnerRegistry::with_builtins();
  return r;
}

struct OpInfo {
  enum class What { Black, Bench, NoBench } what = What::NoBench;
  std::string probe_name;  // Aten.{op}.{overload}, or the bench_for target
  std::vector<std::string> arg_names;
  std::vector<bool> kwarg_only, written, scalar_type;
  std::vector<std::optional<c10::IValue>> defaults;
  std::vector<std::size_t> writes;  // arguments the op writes (schema alias info `!`: in-place, out=), any op
  std::size_t* checked_count = nullptr;  // its CheckScopeSummary::checked_ops entry, once counted
  // Sampling (DECISIONS D23): on api_list (or no api_list), the hash of probe_name, and the calls seen.
  bool listed = true;
  std::uint64_t name_hash = 0;
  std::uint64_t calls = 0;
};

// FNV-1a, then splitmix64's finaliser to mix in the seed, call index and step.
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// True when `v` is the schema's default `d` (the kinds defaults take: None, bool, int, float, str, int[]).
bool is_default(const c10::IValue& v, const std::optional<c10::IValue>& d) {
  if (!d) return false;
  if (d->isNone()) return v.isNone();
  if (d->isBool()) return v.isBool() && v.toBool() == d->toBool();
  if (d->isInt()) return v.isInt() && v.toInt() == d->toInt();
  if (d->isDouble()) return v.isDouble() && v.toDouble() == d->toDouble();
  if (d->isString()) return v.isString() && v.toStringRef() == d->toStringRef();
  if (d->isIntList()) return v.isIntList() && v.toIntVector() == d->toIntVector();
  return false;
}

// ---- the thread's observer state ----

struct Ctx;
struct ScopeState;
struct ThreadState {
  std::vector<ScopeState*> scopes;  // innermost last
  // Tensors lent to clients by this thread's scopes, by the torch storage they read; entries whose record
  // is gone (encoded or dropped) expire and are pruned when the map has doubled.
  std::unordered_map<const c10::StorageImpl*, std::vector<std::weak_ptr<TorchLent>>> lent;
  std::size_t lent_entries = 0, prune_at = 64;
  at::CallbackHandle handle = at::INVALID_CALLBACK_HANDLE;
  int claimed = 0;                 // checked ops running on this thread (their insides are not observed)
  bool in_observer = false;        // set while a callback runs: nothing it causes is observed
  std::vector<Ctx*> open_nobench;  // ops without runner whose insides are being looked into
};
thread_local ThreadState tls;

struct InObserver {
  InObserver() { tls.in_observer = true; }
  ~InObserver() { tls.in_observer = false; }
};

// A scope's settings, per-op facts and counts (CheckScope::Impl, named here so the callbacks can use it).
struct ScopeState {
  CheckScopeOptions o;
  const std::set<std::string>* black = nullptr;  // the shipped lists, or own_black
  std::set<std::string> own_black;
  std::set<std::string> api_list;
  bool step_sampled = true;  // this scope's step passes `steps` and every_nth_step (DECISIONS D23)
  bool count_only = false;   // no checker, dump, client nor overflow mode: nothing is boxed
  std::unordered_map<std::string, OpInfo> infos;  // by "ns::op.overload"; used on the scope's thread only
  // The same, by the address of the op's schema name (RecordFunction::name()): an op's schema lives as long
  // as its registration, so the address names it, and the hot path does no string building nor hashing of
  // names. Only ops (RecordFunctions with a schema) are entered.
  std::unordered_map<const char*, const OpInfo*> by_name;
  mutable std::mutex mu;
  CheckScopeSummary sum;

  const OpInfo& info_for(const at::RecordFunction& fn, const c10::OperatorName& op) {
    std::string key = op.name + "." + (op.overload_name.empty() ? "default" : op.overload_name);
    auto it = infos.find(key);
    if (it != infos.end()) return it->second;
    OpInfo info;
    const auto sep = op.name.find("::");
    const std::string ns = sep == std::string::npos ? "" : op.name.substr(0, sep);
    const std::string bare = sep == std::string::npos ? op.name : op.name.substr(sep + 2);
    const std::string overload = op.overload_name.empty() ? "default" : op.overload_name;
    auto mapped = o.bench_for.find(key);
    if (mapped == o.bench_for.end()) mapped = o.bench_for.find(op.name);
    if (mapped != o.bench_for.end()) {
      info.probe_name = mapped->second;
    } else {
      // Other operator libraries keep their namespace visible: "my_ops::scale" -> "Aten.my_ops__scale...".
      info.probe_name = "Aten." + (ns == "aten" || ns.empty() ? bare : ns + "__" + bare) + "." + overload;
    }
    if (const auto schema = fn.operator_schema()) {
      const auto& args = schema->arguments();
      for (std::size_t i = 0; i < args.size(); ++i)
        if (args[i].alias_info() != nullptr && args[i].alias_info()->isWrite()) info.writes.push_back(i);
    }
    if (mapped == o.bench_for.end() && (black->count(bare) || black->count(bare + "." + overload)))
      info.what = OpInfo::What::Black;
    else if (builtin_registry().find(Framework::PyTorch, info.probe_name))
      info.what = OpInfo::What::Bench;
    if (info.what == OpInfo::What::Bench) {
      info.listed = api_list.empty() || api_list.count(bare) || api_list.count(bare + "." + overload) ||
                    api_list.count(info.probe_name);
      info.name_hash = fnv1a(info.probe_name);
      if (const auto schema = fn.operator_schema()) {
        for (const auto& a : schema->arguments()) {
          info.arg_names.push_back(a.name());
          info.kwarg_only.push_back(a.kwarg_only());
          info.defaults.push_back(a.default_value() ? std::optional<c10::IValue>(*a.default_value())
                                                    : std::nullopt);
          info.written.push_back(a.alias_info() != nullptr && a.alias_info()->isWrite());
          c10::TypePtr t = a.real_type();
          if (const auto opt = t->cast<c10::OptionalType>()) t = opt->getElementType();
          info.scalar_type.push_back(t->kind() == c10::TypeKind::ScalarTypeType);
        }
      }
    }
    return infos.emplace(std::move(key), std::move(info)).first->second;
  }

  // The op's facts: by its schema name's address after the first call. nullptr: not an op.
  const OpInfo* lookup(const at::RecordFunction& fn) {
    const char* name = fn.name();
    const auto it = by_name.find(name);
    if (it != by_name.end()) return it->second;
    const auto op = fn.operator_name();
    if (!op) return nullptr;  // a user RECORD_FUNCTION range, not an op
    const OpInfo* info = &info_for(fn, *op);
    by_name.emplace(name, info);
    return info;
  }

  // Whether this call of a benchable op is checked (DECISIONS D23); counts the call either way.
  bool sampled(OpInfo& info) const {
    const std::uint64_t index = info.calls++;
    if (!step_sampled || !info.listed) return false;
    if (o.share >= 1.0) return true;
    const std::uint64_t h = mix(mix(mix(o.seed ^ info.name_hash) ^ index) ^ o.step.value_or(0));
    return static_cast<double>(h >> 11) * 0x1.0p-53 < o.share;
  }
};

struct Ctx final : at::ObserverContext {
  bool backward = false;  // run by the autograd engine (see in_backward_pass)
  ScopeState* scope = nullptr;
  const OpInfo* info = nullptr;
  bool checked = false;      // else an op without runner being looked into, or not sampled
  bool covered = false;      // (no runner) something inside was checked
  bool not_sampled = false;  // has a runner but sampling left it out: its insides are not observed
  bool light = false;        // count-only scope, inputs convertible: only the outputs are looked at
  std::vector<c10::IValue> inputs;
  std::vector<std::optional<Value>> before_write;  // copies of written arguments taken before the op ran

  // RecordFunction allocates nothing else per op: a context per observed op comes from a per-thread free
  // list (RecordFunction deletes it on the thread that ran the op).
  static void* operator new(std::size_t n);
  static void operator delete(void* p) noexcept;
};

struct CtxFreeList {
  static constexpr std::size_t kMax = 256;
  std::vector<void*> blocks;
  CtxFreeList() { blocks.reserve(kMax); }
  ~CtxFreeList() {
    for (void* p : blocks) ::operator delete(p);
  }
};
thread_local CtxFreeList ctx_free;

void* Ctx::operator new(std::size_t n) {
  if (n == sizeof(Ctx) && !ctx_free.blocks.empty()) {
    void* p = ctx_free.blocks.back();
    ctx_free.blocks.pop_back();
    return p;
  }
  return ::operator new(n);
}

void Ctx::operator delete(void* p) noexcept {
  if (ctx_free.blocks.size() < CtxFreeList::kMax)
    ctx_free.blocks.push_back(p);  // within the reserved capacity: never allocates
  else
    ::operator delete(p);
}

// Whether to_arg() (and, for a written argument, to_probe()) accepts `v`, decided without building
// anything: the count-only path boxes nothing unless this says no, and then takes the full path so the
// reason is the one to_arg() gives.
bool convertible(const c10::IValue& v, bool scalar_type, bool written) {
  if (v.isNone() || v.isBool() || v.isDouble() || v.isString() || v.isDevice()) return true;
  if (v.isInt()) return !scalar_type || has_probe_dtype(static_cast<c10::ScalarType>(v.toInt()));
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return true;
    if (!t.is_cpu() || t.layout() != c10::kStrided || t.is_conj() || t.is_neg() ||
        (t.numel() > 0 && !t.has_storage()) || !has_probe_dtype(t.scalar_type()))
      return false;
    if (written)
      for (const std::int64_t s : t.strides())
        if (s < 0) return false;
    return true;
  }
  if (v.isList()) {
    for (const c10::IValue& e : v.toListRef())
      if (!convertible(e, false, false)) return false;
    return true;
  }
  if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements())
      if (!convertible(e, false, false)) return false;
    return true;
  }
  return false;
}

Value to_value(const c10::IValue& v, bool scalar_type = false);

Value list_value(const c10::IValue& v) {
  std::vector<Value> items;
  for (const c10::IValue& e : v.toListRef()) items.push_back(to_value(e));
  return Value(std::move(items));
}

Value to_value(const c10::IValue& v, bool scalar_type) {
  if (v.isNone()) return Value();
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    return t.defined() ? Value(to_probe(t)) : Value();
  }
  if (v.isBool()) return Value(v.toBool());
  if (v.isInt()) {
    if (scalar_type) return Value(probe_dtype(static_cast<c10::ScalarType>(v.toInt())));
    return Value(static_cast<std::int64_t>(v.toInt()));
  }
  if (v.isDouble()) return Value(v.toDouble());
  if (v.isString()) return Value(std::string(v.toStringRef()));
  if (v.isList()) return list_value(v);
  if (v.isTuple()) {
    std::vector<Value> items;
    for (const c10::IValue& e : v.toTupleRef().elements()) items.push_back(to_value(e));
    return Value(std::move(items), true);
  }
  if (v.isDevice()) return Value(OpaqueValue{"torch.device", v.toDevice().str()});
  throw Error(ErrorKind::Unsupported, std::string("argument of kind ") + v.tagKind() + " has no probe value");
}

OnlineArg to_arg(const c10::IValue& v, bool scalar_type) {
  if (v.isTensor() && v.toTensor().defined()) return view_of(v.toTensor());
  return to_value(v, scalar_type);
}

// ---- tensors lent to the client ----

// Drops the registry's expired entries (their records were encoded or dropped).
void prune_lent(ThreadState& t) {
  std::size_t live = 0;
  for (auto it = t.lent.begin(); it != t.lent.end();) {
    auto& v = it->second;
    std::erase_if(v, [](const std::weak_ptr<TorchLent>& w) { return w.expired(); });
    live += v.size();
    it = v.empty() ? t.lent.erase(it) : std::next(it);
  }
  t.lent_entries = live;
  t.prune_at = std::max<std::size_t>(64, 2 * live);
}

// A probe tensor reading `t`'s memory in place until the client has encoded it (or the scope copied it).
Tensor lend(const at::Tensor& t, std::size_t& lent_count) {
  TensorView v = view_of(t);
  if (t.numel() == 0) return Tensor::zeros(v.dtype, v.shape);
  for (std::int64_t st : v.strides)
    if (st < 0) throw Error(ErrorKind::Unsupported, "negative strides");
  auto lent = std::make_shared<TorchLent>(t, v.dtype, v.shape, std::move(v.strides));
  ThreadState& ts = tls;
  ts.lent[t.storage().unsafeGetStorageImpl()].push_back(lent);
  if (++ts.lent_entries >= ts.prune_at) prune_lent(ts);
  ++lent_count;
  return Tensor::from_storage(v.dtype, std::move(v.shape), std::move(lent));
}

Value lent_value(const c10::IValue& v, bool scalar_type, std::size_t& lent_count) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    return t.defined() ? Value(lend(t, lent_count)) : Value();
  }
  if (v.isList()) {
    std::vector<Value> items;
    for (const c10::IValue& e : v.toListRef()) items.push_back(lent_value(e, false, lent_count));
    return Value(std::move(items));
  }
  if (v.isTuple()) {
    std::vector<Value> items;
    for (const c10::IValue& e : v.toTupleRef().elements()) items.push_back(lent_value(e, false, lent_count));
    return Value(std::move(items), true);
  }
  return to_value(v, scalar_type);
}

// Copy-on-write: before an op writes to the memory of `t`, the records still reading it get their own copy.
void preserve_storage(ThreadState& ts, ScopeState& s, const at::Tensor& t) {
  if (!t.defined() || !t.has_storage()) return;
  const auto it = ts.lent.find(t.storage().unsafeGetStorageImpl());
  if (it == ts.lent.end()) return;
  std::size_t copied = 0;
  for (const std::weak_ptr<TorchLent>& w : it->second)
    if (const auto lent = w.lock())
      if (lent->preserve()) ++copied;
  ts.lent_entries -= it->second.size();
  ts.lent.erase(it);
  if (copied > 0) {
    std::lock_guard lock(s.mu);
    s.sum.copied_before_write += copied;
  }
}

void preserve_written(ThreadState& ts, ScopeState& s, const OpInfo& info, const at::RecordFunction& fn) {
  const auto inputs = fn.inputs();
  for (const std::size_t i : info.writes) {
    if (i >= inputs.size()) continue;
    const c10::IValue& v = inputs[i];
    if (v.isTensor()) {
      preserve_storage(ts, s, v.toTensor());
    } else if (v.isTensorList()) {
      const c10::List<at::Tensor> list = v.toTensorList();
      for (std::size_t j = 0; j < list.size(); ++j) preserve_storage(ts, s, list.get(j));
    }
  }
}

// Copies whatever the thread's scopes lent that no client has read yet; returns how many.
std::size_t preserve_all(ThreadState& ts) {
  std::size_t copied = 0;
  for (auto& [storage, lents] : ts.lent)
    for (const std::weak_ptr<TorchLent>& w : lents)
      if (const auto lent = w.lock())
        if (lent->preserve()) ++copied;
  ts.lent.clear();
  ts.lent_entries = 0;
  ts.prune_at = 64;
  return copied;
}

// Streams one checked op through the scope's client. Nothing escapes into the dispatcher (RecordFunction
// would only log a callback's exception, and the training code could not act on it at an aten op anyway):
// an op the client refuses is counted with the reason; a connection error (Io: closed, reset, or the queue
// full for the client's send_timeout) is recorded once and ends this scope's sending, so training waits on a
// dead or stalled server at most once.
void send_to_client(ScopeState& s, const OpInfo& info, const ApiCall& inputs,
                    const std::vector<Value>& outputs) {
  {
    std::lock_guard lock(s.mu);
    if (!s.sum.client_error.empty()) {
      ++s.sum.not_sent;
      return;
    }
  }
  try {
    s.o.client->send_api(info.probe_name, inputs, outputs, s.o.step.value_or(0), s.o.rank);
    std::lock_guard lock(s.mu);
    ++s.sum.sent;
  } catch (const Error& e) {
    std::lock_guard lock(s.mu);
    ++s.sum.not_sent;
    if (e.kind() == ErrorKind::Io)
      s.sum.client_error = e.what();
    else
      ++s.sum.not_sent_ops[info.probe_name + " (" + e.what() + ")"];
  }
}

// DECISIONS D8 (LibTorch adapter): whether the op runs in autograd's backward pass. The engine sets the
// thread's current GraphTask around everything it evaluates for a backward() (on the calling thread for CPU
// tensors): each Node's apply() and the accumulation of gradients into the inputs of the next Nodes (an add
// outside any Node, which a RecordScope::BACKWARD_FUNCTION range would miss), and resets it after.
bool in_backward_pass() { return ::torch::autograd::get_current_graph_task_exec_info() != nullptr; }

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ThreadState& t = tls;
  if (t.scopes.empty() || t.in_observer || t.claimed > 0) return nullptr;
  ScopeState& s = *t.scopes.back();
  const InObserver guard;
  const OpInfo* found = nullptr;
  try {
    found = s.lookup(fn);
    if (found == nullptr) return nullptr;  // a user RECORD_FUNCTION range, not an op
    // Any op, black-listed or not: it must not change memory a client has yet to read.
    if (!t.lent.empty() && !found->writes.empty()) preserve_written(t, s, *found, fn);
    // The scope's thread alone reads and writes an OpInfo's call count.
    OpInfo& info = const_cast<OpInfo&>(*found);
    if (info.what == OpInfo::What::Black) {
      std::lock_guard lock(s.mu);
      ++s.sum.blacklisted;
      return nullptr;
    }
    auto ctx = std::make_unique<Ctx>();
    ctx->scope = &s;
    ctx->info = &info;
    if (info.what == OpInfo::What::NoBench) {
      t.open_nobench.push_back(ctx.get());
      return ctx;
    }
    // DECISIONS D23: an op sampling leaves out is neither boxed nor looked into (what runs inside it is its
    // implementation, as for a checked op).
    if (!s.sampled(info)) {
      for (Ctx* open : t.open_nobench) open->covered = true;
      ctx->not_sampled = true;
      ++t.claimed;
      std::lock_guard lock(s.mu);
      ++s.sum.not_sampled;
      return ctx;
    }
    const auto inputs = fn.inputs();
    if (s.count_only) {
      bool ok = true;
      for (std::size_t i = 0; i < inputs.size() && ok; ++i)
        ok = convertible(inputs[i], i < info.scalar_type.size() && info.scalar_type[i],
                         i < info.written.size() && info.written[i]);
      if (ok) {
        for (Ctx* open : t.open_nobench) open->covered = true;
        ctx->checked = true;
        ctx->light = true;
        ++t.claimed;
        return ctx;
      }
    }
    ctx->inputs.assign(inputs.begin(), inputs.end());
    ctx->before_write.resize(ctx->inputs.size());
    for (std::size_t i = 0; i < ctx->inputs.size() && i < info.written.size(); ++i)
      if (info.written[i] && ctx->inputs[i].isTensor() && ctx->inputs[i].toTensor().defined()) {
        const at::Tensor& w = ctx->inputs[i].toTensor();
        Tensor p = to_probe(w);  // a strided view comes back as a fresh copy already
        ctx->before_write[i] = Value(w.is_contiguous() ? p.clone() : std::move(p));
      }
    ctx->checked = true;
    ctx->backward = in_backward_pass();
    for (Ctx* open : t.open_nobench) open->covered = true;
    ++t.claimed;
    return ctx;
  } catch (const std::exception& e) {
    const auto op = fn.operator_name();
    std::lock_guard lock(s.mu);
    ++s.sum.not_convertible;
    ++s.sum.not_convertible_ops[(op ? op->name + "." + op->overload_name : std::string(fn.name())) + " (" +
                                e.what() + ")"];
    return nullptr;
  }
}

// Adds `path` (a tensor) or `path.j` (element j of a tensor list) for the tensors of `v` that autograd
// says require grad: the dump records what the framework says (DumpRecordContext::requires_grad).
void requires_grad_paths(const c10::IValue& v, const std::string& path, std::vector<std::string>& out) {
  if (v.isTensor()) {
    if (v.toTensor().defined() && v.toTensor().requires_grad()) out.push_back(path);
  } else if (v.isTensorList()) {
    const c10::List<at::Tensor> list = v.toTensorList();
    for (std::size_t j = 0; j < list.size(); ++j) {
      const at::Tensor t = list.get(j);
      if (t.defined() && t.requires_grad()) out.push_back(path + "." + std::to_string(j));
    }
  }
}

// Overflow mode: whether a floating tensor of `v` (a tensor or a tensor list) holds inf or NaN, read from
// its memory (all exponent bits set) without calling a torch op. Tensors probe cannot view hold none here.
bool tensor_non_finite(const at::Tensor& t) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0 || !t.is_cpu() || t.layout() != c10::kStrided)
    return false;
  const c10::ScalarType st = t.scalar_type();
  if (st != c10::kFloat && st != c10::kDouble && st != c10::kHalf && st != c10::kBFloat16) return false;
  const Tensor p = to_probe(t);
  const std::byte* b = p.bytes();
  const std::int64_t n = p.numel();
  const auto scan = [&](auto word, auto mask) {
    using W = decltype(word);
    for (std::int64_t i = 0; i < n; ++i) {
      W w;
      std::memcpy(&w, b + i * static_cast<std::int64_t>(sizeof(W)), sizeof(W));
      if ((w & mask) == mask) return true;
    }
    return false;
  };
  switch (st) {
    case c10::kFloat:
      return scan(std::uint32_t{}, std::uint32_t{0x7F800000u});
    case c10::kDouble:
      return scan(std::uint64_t{}, std::uint64_t{0x7FF0000000000000ull});
    case c10::kHalf:
      return scan(std::uint16_t{}, std::uint16_t{0x7C00u});
    default:
      return scan(std::uint16_t{}, std::uint16_t{0x7F80u});
  }
}

bool non_finite(const c10::IValue& v) {
  if (v.isTensor()) return tensor_non_finite(v.toTensor());
  if (v.isTensorList()) {
    const c10::List<at::Tensor> list = v.toTensorList();
    for (std::size_t j = 0; j < list.size(); ++j)
      if (tensor_non_finite(list.get(j))) return true;
  }
  return false;
}

// Overflow mode: true when this op is the scope's first to turn finite inputs into inf/NaN outputs (then
// recorded); every other op stops here.
bool first_overflow(ScopeState& s, const Ctx& ctx, const at::RecordFunction& fn) {
  {
    std::lock_guard lock(s.mu);
    ++s.sum.overflow_scanned;
    if (s.sum.first_overflow) return false;
  }
  std::optional<std::size_t> bad;
  const auto outputs = fn.outputs();
  for (std::size_t i = 0; i < outputs.size() && !bad; ++i)
    if (non_finite(outputs[i])) bad = i;
  if (!bad) return false;
  for (std::size_t i = 0; i < ctx.inputs.size(); ++i) {
    // An in-place op's written input is judged by its value before the op ran.
    if (ctx.before_write[i]) continue;
    if (non_finite(ctx.inputs[i])) return false;
  }
  std::lock_guard lock(s.mu);
  s.sum.first_overflow = FirstOverflow{ctx.info->probe_name, *bad, ctx.backward, s.o.step};
  return true;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* raw) {
  if (raw == nullptr) return;
  auto& ctx = *static_cast<Ctx*>(raw);
  ScopeState& s = *ctx.scope;
  const OpInfo& info = *ctx.info;
  const InObserver guard;
  if (ctx.not_sampled) {
    --tls.claimed;
    return;
  }
  if (!ctx.checked) {
    if (!tls.open_nobench.empty() && tls.open_nobench.back() == &ctx) tls.open_nobench.pop_back();
    std::lock_guard lock(s.mu);
    if (ctx.covered) {
      ++s.sum.decomposed;
    } else {
      ++s.sum.unsupported;
      ++s.sum.unsupported_ops[info.probe_name];
    }
    return;
  }
  --tls.claimed;
  try {
    if (ctx.light) {
      // Count-only: the outputs are only tried (through to_arg, for its reason) when one is not convertible.
      const auto outs = fn.outputs();
      bool ok = true;
      for (std::size_t i = 0; i < outs.size() && ok; ++i) ok = convertible(outs[i], false, false);
      if (!ok)
        for (const c10::IValue& out : outs) to_arg(out, false);
      std::lock_guard lock(s.mu);
      ++s.sum.checked;
      ++s.sum.checked_ops[info.probe_name];
      return;
    }
    if (s.o.overflow_check && !first_overflow(s, ctx, fn)) return;
    OnlineCall call;               // the checker's arguments (views of torch memory)
    ApiCall dump_call;             // the dump's values (probe tensors sharing torch memory)
    ApiCall client_call;           // the client's values (torch memory lent until the client reads it)
    DumpRecordContext grad_paths;  // the tensors autograd says require grad, for the dump
    OnlineChecker* const checker = s.o.checker;
    DumpWriter* const dump = s.o.dump;
    const bool to_client = s.o.client != nullptr;
    // With nothing to hand the op to (a count-only scope whose op has an input the light path refused), the
    // conversion is still tried: its error is the summary's not-convertible reason.
    const bool views = checker != nullptr || (!dump && !to_client);
    std::size_t lent = 0;
    // DECISIONS D8 (LibTorch adapter): arguments left at their schema default are not passed, as Python's
    // dispatch passes them (probe's runners have Python's signatures, where e.g. add's alpha is keyword-only
    // but aten::add.Scalar's is positional): trailing positional ones and keyword-only ones.
    const auto at_default = [&](std::size_t i) {
      return i < info.defaults.size() && !ctx.before_write[i] && is_default(ctx.inputs[i], info.defaults[i]);
    };
    std::size_t positional_end = 0;
    for (std::size_t i = 0; i < ctx.inputs.size(); ++i)
      if (!(i < info.kwarg_only.size() && info.kwarg_only[i]) && !at_default(i)) positional_end = i + 1;
    const auto add = [](auto& c, bool kw, const std::string& name, auto&& v) {
      if (kw)
        c.kwargs.emplace_back(name, std::forward<decltype(v)>(v));
      else
        c.args.push_back(std::forward<decltype(v)>(v));
    };
    for (std::size_t i = 0; i < ctx.inputs.size(); ++i) {
      const bool kw = i < info.kwarg_only.size() && info.kwarg_only[i];
      if ((kw || i >= positional_end) && at_default(i)) continue;
      const bool st = i < info.scalar_type.size() && info.scalar_type[i];
      const std::optional<Value>& before = ctx.before_write[i];  // an owned copy: shared by all three
      if (dump) {
        requires_grad_paths(
            ctx.inputs[i],
            kw ? "kwargs." + info.arg_names[i] : "input." + std::to_string(dump_call.args.size()),
            grad_paths.requires_grad);
        add(dump_call, kw, info.arg_names[i], before ? *before : to_value(ctx.inputs[i], st));
      }
      if (to_client)
        add(client_call, kw, info.arg_names[i],
            before ? kept_value(*before) : lent_value(ctx.inputs[i], st, lent));
      if (views) add(call, kw, info.arg_names[i], before ? OnlineArg(*before) : to_arg(ctx.inputs[i], st));
    }
    std::vector<OnlineArg> outputs;
    std::vector<Value> dump_outputs, client_outputs;
    for (const c10::IValue& out : fn.outputs()) {
      if (views) outputs.push_back(to_arg(out, false));
      if (dump) {
        requires_grad_paths(out, "output." + std::to_string(dump_outputs.size()), grad_paths.requires_grad);
        dump_outputs.push_back(to_value(out));
      }
      if (to_client) client_outputs.push_back(lent_value(out, false, lent));
    }
    if (checker) checker->check(info.probe_name, call, outputs, OnlineCallSite{ctx.backward, s.o.step});
    if (dump) dump->api_forward(info.probe_name, dump_call, dump_outputs, grad_paths);
    if (to_client) send_to_client(s, info, client_call, client_outputs);
    std::lock_guard lock(s.mu);
    s.sum.lent += lent;
    ++s.sum.checked;
    OpInfo& counted = const_cast<OpInfo&>(info);  // the scope's thread alone writes an OpInfo
    if (counted.checked_count == nullptr) counted.checked_count = &s.sum.checked_ops[info.probe_name];
    ++*counted.checked_count;
  } catch (const std::exception& e) {
    std::lock_guard lock(s.mu);
    ++s.sum.not_convertible;
    ++s.sum.not_convertible_ops[info.probe_name + " (" + e.what() + ")"];
  }
}

}  // namespace

struct CheckScope::Impl : ScopeState {};

TensorView view_of(const at::Tensor& t) {
  check_viewable(t);
  TensorView v;
  v.dtype = probe_dtype(t.scalar_type());
  v.data = t.numel() > 0 ? t.data_ptr() : nullptr;
  v.shape.assign(t.sizes().begin(), t.sizes().end());
  if (!t.is_contiguous()) v.strides.assign(t.strides().begin(), t.strides().end());
  return v;
}

Tensor to_probe(const at::Tensor& t) {
  const TensorView v = view_of(t);
  if (v.strides.empty()) {
    if (t.numel() == 0) return Tensor::zeros(v.dtype, v.shape);
    return Tensor::from_storage(v.dtype, v.shape, std::make_shared<BorrowedStorage>(t));
  }
  for (std::int64_t s : v.strides)
    if (s < 0) throw Error(ErrorKind::Unsupported, "negative strides");
  return io::materialise(v.dtype, v.shape, v.strides, static_cast<const std::byte*>(v.data));
}

namespace {
CheckScopeOptions checking_with(OnlineChecker& checker) {
  CheckScopeOptions o;
  o.checker = &checker;
  return o;
}
}  // namespace

CheckScope::CheckScope(OnlineChecker& checker) : CheckScope(checking_with(checker)) {}

CheckScope::CheckScope(CheckScopeOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (!(options.share > 0.0 && options.share <= 1.0))
    throw Error(ErrorKind::InvalidArgument, "share must be in (0, 1], got " + std::to_string(options.share),
                "", "CheckScopeOptions.share");
  if (options.every_nth_step == 0)
    throw Error(ErrorKind::InvalidArgument, "every_nth_step must be >= 1", "",
                "CheckScopeOptions.every_nth_step");
  if (options.black_list) {
    m.own_black.insert(options.black_list->begin(), options.black_list->end());
    m.black = &m.own_black;
  } else {
    m.black = &shipped_black_list();
  }
  m.api_list.insert(options.api_list.begin(), options.api_list.end());
  // DECISIONS D23: the step filters are decided once per scope (a scope per step).
  if (!options.steps.empty())
    m.step_sampled = options.step && std::find(options.steps.begin(), options.steps.end(), *options.step) !=
                                         options.steps.end();
  if (options.every_nth_step > 1)
    m.step_sampled = m.step_sampled && options.step && *options.step % options.every_nth_step == 0;
  m.count_only = !options.checker && !options.dump && !options.client && !options.overflow_check;
  m.o = std::move(options);
  if (tls.scopes.empty()) {
    tls.handle = at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end)
                                                .needsInputs(true)
                                                .needsOutputs(true)
                                                .scopes({at::RecordScope::FUNCTION}));
  }
  tls.scopes.push_back(impl_.get());
}

CheckScope::~CheckScope() {
  // Scopes end in reverse order of construction on their thread (RAII); be tolerant of anything else.
  auto& v = tls.scopes;
  for (auto it = v.end(); it != v.begin();) {
    --it;
    if (*it == impl_.get()) {
      v.erase(it);
      break;
    }
  }
  if (v.empty() && tls.handle != at::INVALID_CALLBACK_HANDLE) {
    at::removeCallback(tls.handle);
    tls.handle = at::INVALID_CALLBACK_HANDLE;
  }
  // Unobserved from here: what the client has not read yet is copied before the program can change it.
  if (v.empty()) {
    try {
      preserve_all(tls);
    } catch (const std::exception&) {  // no memory for a copy: the client's version check still drops
    }                                  // a record whose tensor changes before it is read
  }
}

std::size_t CheckScope::preserve_lent() {
  const std::size_t copied = preserve_all(tls);
  std::lock_guard lock(impl_->mu);
  impl_->sum.copied_at_release += copied;
  return copied;
}

CheckScopeSummary CheckScope::summary() const {
  std::lock_guard lock(impl_->mu);
  return impl_->sum;
}

std::string to_string(const CheckScopeSummary& s) {
  std::string out = "aten ops: " + std::to_string(s.checked) + " checked, " + std::to_string(s.decomposed) +
                    " decomposed into checked ops, " + std::to_string(s.blacklisted) + " black-listed, " +
                    std::to_string(s.unsupported) + " without probe runner, " +
                    std::to_string(s.not_convertible) + " not convertible\n";
  for (const auto& [name, n] : s.unsupported_ops)
    out += "  no runner: " + name + " x" + std::to_string(n) + "\n";
  for (const auto& [name, n] : s.not_convertible_ops)
    out += "  not convertible: " + name + " x" + std::to_string(n) + "\n";
  if (s.sent + s.not_sent > 0)
    out += "sent to the pre-check server: " + std::to_string(s.sent) +
           ", not sent: " + std::to_string(s.not_sent) + "\n";
  for (const auto& [name, n] : s.not_sent_ops) out += "  not sent: " + name + " x" + std::to_string(n) + "\n";
  if (!s.client_error.empty()) out += "  client error: " + s.client_error + "\n";
  if (s.lent > 0)
    out += "tensors lent to the client: " + std::to_string(s.lent) +
           ", copied before an op wrote to them: " + std::to_string(s.copied_before_write) +
           ", copied when released: " + std::to_string(s.copied_at_release) + "\n";
  return out;
}

}  // namespace probe::torch
