// A fixed pool of worker threads for the CPU backend: parallel_for over index ranges.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pixflow::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }
  /// Runs f(begin, end) over `chunks` contiguous pieces of [0, n) on up to `threads`
  /// threads (the caller's thread takes part) and returns when all are done. The first
  /// exception thrown by f is rethrown here. Not reentrant: nested calls run serially.
  void parallel_for(std::int64_t n, int threads,
                    const std::function<void(std::int64_t, std::int64_t)>& f);

  /// The process-wide pool (all hardware threads).
  static ThreadPool& global();

 private:
  void worker_loop();
  bool run_one(std::unique_lock<std::mutex>& lock);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(std::int64_t, std::int64_t)>* job_ = nullptr;
  std::int64_t n_ = 0, chunks_ = 0, next_ = 0, pending_ = 0;
  int slots_ = 0;
  std::exception_ptr error_;
  bool stop_ = false, busy_ = false;
};

}  // namespace pixflow::cpu
