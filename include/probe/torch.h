// probe::torch: checking a LibTorch (PyTorch C++) program's aten operators while it runs, the C++ counterpart
// of msprobe's `with PtdbgDispatch(...)` (seed 003, dump-and-compare §4). Part of the optional component
// probe_torch (CMake target probe::torch, `find_package(probe COMPONENTS torch)`), built when CMake finds
// Torch. This header includes no LibTorch header: a LibTorch translation unit includes <torch/torch.h>
// itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "probe/dump_writer.h"
#include "probe/export.h"
#include "probe/online_checker.h"
#include "probe/tensor.h"

namespace at {
class Tensor;
}
namespace probe::online {
class Client;
}

namespace probe::torch {

/// What a CheckScope does with the ops it observes, and which ops it leaves alone.
struct PROBE_API CheckScopeOptions {
  /// Ops are judged by this checker (not owned; must outlive the scope; may be shared by scopes on several
  /// threads, it is thread-safe). nullptr: not checked.
  OnlineChecker* checker = nullptr;
  /// Ops are also recorded in this dump as "Aten.{op}.{overload}.{k}.forward" (not owned; must outlive the
  /// scope). nullptr: no dump. With checker, dump and client null the scope only counts.
  DumpWriter* dump = nullptr;
  /// Ops are also streamed to a `probe run_ut` server through this client (probe/online_client.h) as
  /// "Aten.{op}.{overload}.{k}", numbered by Client::send_api (not owned; must outlive the scope; may be
  /// shared by scopes on several threads). An op waits while the client's queue is full (at most its
  /// send_timeout). The op's tensors are lent to the client (online::LentStorage), not copied: the client
  /// reads them in place when it encodes the record on its I/O thread (ClientOptions::encode_on_io_thread,
  /// the default). Before an op in the scope writes to memory a queued record still reads (in-place ops,
  /// out= arguments: the schema's alias annotations), that tensor is copied first (copy-on-write); when the
  /// last scope on the thread ends (or preserve_lent()), whatever is still queued is copied; a tensor changed
  /// by an op on another thread (also one observed by that thread's scope: the copy-on-write is per thread)
  /// before the client read it has moved its version counter, and its record is dropped
  /// (ClientStats::changed), never sent. The memory so held is bounded by the client's send_queue.
  online::Client* client = nullptr;
  /// The training step (a scope per step: set it) and rank, sent with every op to `client` (an unset step as
  /// 0). A set step also leads the names of the checker's rows (`step3.Aten.mm.default.1`).
  std::optional<std::uint64_t> step;
  std::uint64_t rank = 0;
  /// Ops never checked nor dumped, matched by bare aten name ("view") or "{name}.{overload}": nullopt = the
  /// shipped lists (data/online_dispatch.json, msprobe's aten_ops_blacklist, plus
  /// data/torch_check_scope.json, the views, factories and bookkeeping ops that the C++ dispatcher shows and
  /// PtdbgDispatch never sees).
  std::optional<std::vector<std::string>> black_list;
  /// Ops of other operator libraries (TORCH_LIBRARY) judged by a probe runner: "my_ops::gelu" (or
  /// "my_ops::gelu.overload") -> "Aten.gelu.default". The op is reported under the probe name it maps to.
  std::map<std::string, std::string> bench_for;
  /// Overflow mode: every op with a probe runner only has its floating inputs and outputs scanned for
  /// inf/NaN (their memory read in place; no bench). The first op whose inputs are finite and whose outputs
  /// are not is the summary's first_overflow and is the only op handed to checker (which re-runs it in
  /// float64 and judges it), dump (a replayable entry with its inputs) and client.
  bool overflow_check = false;

  // Sampling for long runs (DECISIONS D23). An op these leave out is counted in not_sampled and costs
  // about what a count-only scope costs: the choice is made before its inputs are boxed. The black list,
  // bench_for and the looking into ops without runner are unchanged.
  /// msprobe's `step`: check only in these steps (matched against `step`; a scope without `step` then checks
  /// nothing). Empty: every step.
  std::vector<std::uint64_t> steps;
  /// msprobe's `api_list`: check only these ops, named "mm", "mm.default" or "Aten.mm.default". Empty: all.
  std::vector<std::string> api_list;
  /// Check the ops of one step in N: steps with step % N == 0 (needs `step`; 1: every step; 0 is refused).
  std::uint64_t every_nth_step = 1;
  /// Check this share of ops, in (0, 1]: an op is checked when a hash of (seed, its probe name, its call
  /// index in this scope, step) falls below share, so a rerun checks the same ops.
  double share = 1.0;
  std::uint64_t seed = 0;
};

/// The op where inf/NaN first appeared in an overflow-mode scope.
struct PROBE_API FirstOverflow {
  std::string api;                    ///< "Aten.exp.default"
  std::size_t output = 0;             ///< index of the first output holding inf/NaN
  bool backward = false;              ///< run by autograd in the backward pass
  std::optional<std::uint64_t> step;  ///< CheckScopeOptions::step
};

/// What one scope saw. Every op the dispatcher ran on the scope's thread while no checked op was running
/// lands in exactly one count; ops run inside a checked op (its own implementation) are not observed.
struct PROBE_API CheckScopeSummary {
  std::size_t blacklisted = 0;  ///< on the black list
  std::size_t checked = 0;      ///< handed to the checker, dump and/or client
  /// No probe runner, but every tensor computation inside it was checked as smaller ops
  /// (aten::linear runs aten::addmm): counted here, not as unsupported.
  std::size_t decomposed = 0;
  std::size_t unsupported = 0;      ///< no probe runner and nothing inside it checked: never judged
  std::size_t not_convertible = 0;  ///< an input or output probe cannot view (not CPU, sparse, complex32...)
  std::size_t not_sampled = 0;      ///< has a probe runner, left out by steps, api_list or the rate
  std::map<std::string, std::size_t> unsupported_ops;      ///< "Aten.{op}.{overload}" -> count
  std::map<std::string, std::size_t> not_convertible_ops;  ///< same, with the first reason appended
  std::map<std::string, std::size_t> checked_ops;          ///< same, for checked ops
  /// With a client, every checked op is either sent (queued on it; its stats() say what the server
  /// acknowledged) or not_sent: refused by the client (not_sent_ops says why) or after client_error.
  std::size_t sent = 0;
  std::size_t not_sent = 0;
  std::map<std::string, std::size_t> not_sent_ops;  ///< "Aten.{op}.{overload} (reason)" -> count
  /// With a client: tensors lent to it; of those, copied because an op of the scope was about to write to
  /// their memory before the client had read them (copy-on-write), and copied by preserve_lent().
  std::size_t lent = 0;
  std::size_t copied_before_write = 0;
  std::size_t copied_at_release = 0;
  /// The client's first connection error (lost, or its queue full for send_timeout): from then on the scope
  /// sends nothing (training goes on; checker and dump still get every op). Empty: none.
  std::string client_error;
  /// Overflow mode: ops scanned, and the first that produced inf/NaN (none: nullopt).
  std::size_t overflow_scanned = 0;
  std::optional<FirstOverflow> first_overflow;
};

/// RAII guard: while alive, every aten op the dispatcher runs on the constructing thread (and the backward
/// ops autograd runs for it, which on CPU run on the same thread) is observed with its inputs and outputs,
/// converted to probe tensors without copying (checker and client copy what they keep) and handed to the
/// checker, dump and/or client as "Aten.{op}.{overload}". The checker is told which ops autograd ran in the
/// backward pass (OnlineCallSite::backward: its rows say `.backward.`). Nested scopes on one thread: the
/// innermost one observes, the outer ones resume when it ends. Scopes on different threads are independent.
/// The observer never calls a torch op, so it never observes itself.
///
/// A failing client never throws into the training code (aten ops cannot carry the error): it lands in the
/// summary's client_error, and the caller's client.close() throws it too.
///
/// Thread-safety: a scope belongs to its thread: construct and destroy it there; summary() may be called
/// from any thread.
class PROBE_API CheckScope {
 public:
  /// Starts observing. With neither checker nor dump the scope only counts (the coverage of a model).
  /// Throws Error(Io/Format) when the shipped black list cannot be read, Error(InvalidArgument) naming the
  /// field for a share outside (0, 1] or every_nth_step 0.
  explicit CheckScope(CheckScopeOptions options);
  /// Shorthand: check every op with `checker`.
  explicit CheckScope(OnlineChecker& checker);
  /// Stops observing; the last scope on the thread copies the tensors lent to a client that it has not read
  /// yet (preserve_lent()). Does not flush the checker nor close the client (their own flush()/close() do).
  ~CheckScope();
  CheckScope(const CheckScope&) = delete;
  CheckScope& operator=(const CheckScope&) = delete;

  CheckScopeSummary summary() const;
  /// Copies the tensors this thread's scopes lent to a client that it has not read yet, so the program may
  /// change them where no scope observes it (the last scope's destructor does this too). Returns how many
  /// (also counted in copied_at_release). Call it on the scope's thread.
  std::size_t preserve_lent();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The summary as text for a log: the counts, then each unsupported / not convertible op with its count.
PROBE_API std::string to_string(const CheckScopeSummary& summary);

/// The probe view of a CPU strided tensor's memory (no copy): dtype, shape and strides in elements.
/// Throws Error(Unsupported) naming the reason for a tensor probe cannot view (undefined, not on the CPU,
/// not strided, conjugate/negative bit set, a dtype probe lacks).
PROBE_API TensorView view_of(const at::Tensor& tensor);
/// A probe::Tensor sharing the torch tensor's memory when it is contiguous (the torch storage is kept alive
/// by the probe tensor), else a contiguous copy. Throws like view_of().
PROBE_API Tensor to_probe(const at::Tensor& tensor);

}  // namespace probe::torch
