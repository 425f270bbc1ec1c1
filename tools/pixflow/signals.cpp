// SIGINT and SIGTERM for `pixflow run` (docs/cli.md, "Interrupting a run"): nothing half
// written survives a signal, and a batch stops between items.
#include <signal.h>

#include <atomic>

#include "pixflow/io.hpp"
#include "tools/pixflow/cli.hpp"

namespace pixflow::cli {

namespace {

std::atomic<int> g_stop{0};
std::atomic<bool> g_batch{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "signal handlers need lock-free atomics");

// Async-signal-safe only: atomics, unlink (inside remove_pending_temporaries), sigaction, raise.
void on_signal(int sig) {
  int none = 0;
  if (g_batch.load() && g_stop.compare_exchange_strong(none, sig)) return;  // stop between items
  remove_pending_temporaries();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // the exit status says which signal ended the process, as without a handler
}

}  // namespace

void install_signal_handlers(bool batch) {
  g_batch = batch;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and writes in flight go on; the batch checks stop_signal()
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // e.g. started with nohup: keep ignoring it
    sigaction(sig, &sa, nullptr);
  }
}

int stop_signal() {
  return g_stop.load();
}

}  // namespace pixflow::cli
