#include "src/backends/cpu/thread_pool.hpp"

#include <algorithm>

namespace pixflow::cpu {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(int(std::max(1u, std::thread::hardware_concurrency())));
  return pool;
}

// Takes the next chunk of the current job (lock held on entry and exit). Returns false
// when no chunk is left.
bool ThreadPool::run_one(std::unique_lock<std::mutex>& lock) {
  if (!job_ || next_ >= chunks_) return false;
  const std::int64_t c = next_++;
  const auto* job = job_;
  const std::int64_t b = n_ * c / chunks_, e = n_ * (c + 1) / chunks_;
  lock.unlock();
  std::exception_ptr err;
  try {
    (*job)(b, e);
  } catch (...) {
    err = std::current_exception();
  }
  lock.lock();
  if (err && !error_) error_ = err;
  if (--pending_ == 0) done_cv_.notify_all();
  return true;
}

void ThreadPool::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || (job_ && next_ < chunks_ && slots_ > 0); });
    if (stop_) return;
    --slots_;  // joins this job; never released, so at most `threads` run it at once
    while (run_one(lock)) {
    }
  }
}

void ThreadPool::parallel_for(std::int64_t n, int threads,
                              const std::function<void(std::int64_t, std::int64_t)>& f) {
  if (n <= 0) return;
  if (threads <= 0 || threads > size()) threads = size();
  std::unique_lock<std::mutex> lock(mutex_);
  if (busy_ || threads == 1 || n == 1) {  // nested or serial: run here
    lock.unlock();
    f(0, n);
    return;
  }
  busy_ = true;
  // A few chunks per thread balance uneven rows without much overhead.
  chunks_ = std::min<std::int64_t>(n, std::int64_t(threads) * 4);
  n_ = n;
  next_ = 0;
  pending_ = chunks_;
  error_ = nullptr;
  slots_ = threads - 1;
  job_ = &f;
  lock.unlock();
  work_cv_.notify_all();
  lock.lock();
  while (run_one(lock)) {
  }
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
  busy_ = false;
  auto err = error_;
  error_ = nullptr;
  lock.unlock();
  if (err) std::rethrow_exception(err);
}

}  // namespace pixflow::cpu
