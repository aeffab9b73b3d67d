//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/common/thread_annotations.hpp
//
// Clang's thread-safety analysis for the core's locks: a Mutex is a capability, MutexLock holds it for a scope, a
// member GUARDED_BY a mutex may be touched only while it is held, and a ...Locked function REQUIRES it. Clang checks
// them at compile time (CMakeLists adds -Wthread-safety); other compilers read them as documentation.
//===----------------------------------------------------------------------===//

#pragma once

#include <mutex>

#if defined(__clang__)
#define HTTPFS2_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define HTTPFS2_THREAD_ANNOTATION(x)
#endif

#define HTTPFS2_CAPABILITY(name)  HTTPFS2_THREAD_ANNOTATION(capability(name))
#define HTTPFS2_SCOPED_CAPABILITY HTTPFS2_THREAD_ANNOTATION(scoped_lockable)
#define HTTPFS2_GUARDED_BY(mutex) HTTPFS2_THREAD_ANNOTATION(guarded_by(mutex))
#define HTTPFS2_REQUIRES(mutex)   HTTPFS2_THREAD_ANNOTATION(requires_capability(mutex))
#define HTTPFS2_ACQUIRE(...)      HTTPFS2_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define HTTPFS2_RELEASE(...)      HTTPFS2_THREAD_ANNOTATION(release_capability(__VA_ARGS__))

namespace httpfs2 {

//! A std::mutex the analysis knows as a capability.
class HTTPFS2_CAPABILITY("mutex") Mutex {
public:
	void lock() HTTPFS2_ACQUIRE() {
		mutex.lock();
	}
	void unlock() HTTPFS2_RELEASE() {
		mutex.unlock();
	}

private:
	std::mutex mutex;
};

//! Holds a Mutex until the end of the scope.
class HTTPFS2_SCOPED_CAPABILITY MutexLock {
public:
	explicit MutexLock(Mutex &mutex_p) HTTPFS2_ACQUIRE(mutex_p) : mutex(mutex_p) {
		mutex.lock();
	}
	~MutexLock() HTTPFS2_RELEASE() {
		mutex.unlock();
	}
	MutexLock(const MutexLock &) = delete;
	MutexLock &operator=(const MutexLock &) = delete;

private:
	Mutex &mutex;
};

} // namespace httpfs2
