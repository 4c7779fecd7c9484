// The host thread pool (the CPU backend's loops, and host work of any layer): persistent workers
// woken per parallel_for.
#include "support/thread_pool.hpp"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::host {

namespace {

thread_local bool in_task = false;
// A child made by fork() has the pool's state but none of its threads (DataLoader workers):
// from then on its loops run on the calling thread.
std::atomic<bool> forked_child{false};

class Pool {
public:
    explicit Pool(int n) : nthreads_(n) {
        for (int i = 1; i < n; ++i)
            workers_.emplace_back([this] { work(); });
    }
    ~Pool() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
            stop_flag_ = true;
        }
        cv_.notify_all();
        for (auto& w : workers_)
            w.join();
    }
    int size() const { return nthreads_; }

    void run(int64_t ntasks, const std::function<void(int64_t)>& fn) {
        std::unique_lock<std::mutex> job_lock(job_mu_);  // one job at a time
        {
            std::lock_guard<std::mutex> lock(mu_);
            fn_ = &fn;
            ntasks_ = ntasks;
            next_.store(0);
            done_ = 0;
            error_ = nullptr;
            ++generation_;
            ++active_;  // the caller itself
        }
        cv_.notify_all();
        drain(fn, ntasks);
        // Close the job to latecomers, then wait for every task and every worker in drain():
        // spin briefly first, since sleeping and waking costs tens of microseconds.
        {
            std::lock_guard<std::mutex> lock(mu_);
            fn_ = nullptr;
        }
        spin_until([&] { return done_.load() == ntasks && active_.load() == 0; });
        std::unique_lock<std::mutex> lock(mu_);
        done_cv_.wait(lock, [&] { return done_.load() == ntasks_ && active_.load() == 0; });
        if (error_) std::rethrow_exception(error_);
    }

private:
    void drain(const std::function<void(int64_t)>& fn, int64_t ntasks) {
        in_task = true;
        int64_t finished = 0;
        for (;;) {
            int64_t t = next_.fetch_add(1);
            if (t >= ntasks) break;
            try {
                fn(t);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mu_);
                if (!error_) error_ = std::current_exception();
            }
            ++finished;
        }
        in_task = false;
        std::lock_guard<std::mutex> lock(mu_);
        done_ += finished;
        --active_;
        if (done_ == ntasks_ && active_ == 0) done_cv_.notify_all();
    }
    // Spins for up to ~50 microseconds waiting for `ready`; true when it became true.
    template <class F>
    static bool spin_until(F&& ready) {
        auto start = std::chrono::steady_clock::now();
        for (int i = 0;; ++i) {
            if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            if ((i & 63) == 63 &&
                std::chrono::steady_clock::now() - start > std::chrono::microseconds(50))
                return false;
        }
    }

    void work() {
        uint64_t seen = 0;
        for (;;) {
            const std::function<void(int64_t)>* fn;
            int64_t ntasks;
            // Back-to-back jobs (one op after another) find the worker still awake.
            spin_until([&] { return stop_flag_.load() || generation_.load() != seen; });
            {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock, [&] { return stop_ || (generation_ != seen && fn_); });
                if (stop_) return;
                seen = generation_;
                fn = fn_;
                ntasks = ntasks_;
                ++active_;
            }
            drain(*fn, ntasks);
        }
    }

    int nthreads_;
    std::vector<std::thread> workers_;
    std::mutex job_mu_, mu_;
    std::condition_variable cv_, done_cv_;
    const std::function<void(int64_t)>* fn_ = nullptr;
    int64_t ntasks_ = 0;
    std::atomic<int64_t> next_{0};
    std::atomic<int64_t> done_{0};
    std::atomic<int> active_{0};
    std::atomic<uint64_t> generation_{0};
    std::atomic<bool> stop_flag_{false};
    bool stop_ = false;
    std::exception_ptr error_;
};

int configured_threads() {
    if (const char* s = std::getenv("EMBER_NUM_THREADS")) {
        int n = std::atoi(s);
        if (n >= 1 && n <= 1024) return n;
    }
    unsigned hc = std::thread::hardware_concurrency();
    return hc ? int(hc) : 1;
}

Pool& pool() {
    static Pool* p = [] {
        pthread_atfork(nullptr, nullptr, [] { forked_child.store(true); });
        return new Pool(configured_threads());  // leaked: workers outlive static dtors
    }();
    return *p;
}

}  // namespace

int num_threads() {
    static const int n = configured_threads();
    return n;
}

void parallel_for(int64_t ntasks, const std::function<void(int64_t)>& fn) {
    if (ntasks <= 0) return;
    if (ntasks == 1 || in_task || num_threads() == 1 || forked_child.load()) {
        for (int64_t t = 0; t < ntasks; ++t)
            fn(t);
        return;
    }
    pool().run(ntasks, fn);
}

}  // namespace ember::host
