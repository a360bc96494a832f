//go:build unix

package statementpdf_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process used so far (user and system, every thread, the
// garbage collector's included): a benchmark's cost that a busy machine does not inflate, as
// it does wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
