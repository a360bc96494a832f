package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a server the harness started as a child process: creditd serve, the baseline or
// PostGraphile.
type Process struct {
	cmd *exec.Cmd
	// Addr is the API listener's address; PprofAddr the profiling one, when asked for.
	Addr, PprofAddr string
	log             *os.File
	done            chan error
	stopOnce        sync.Once
}

// StartCreditd runs `creditd serve` on dsn (a SQLite file or a postgres:// URL) with the given
// extra flags, its log going to logPath (a file, so the harness spends no CPU reading it), and
// waits until it listens.
func StartCreditd(ctx context.Context, binary, dsn, logPath string, flags ...string) (*Process, error) {
	args := append([]string{"serve", "--db", dsn, "--addr", "127.0.0.1:0"}, flags...)
	return start(ctx, exec.Command(binary, args...), logPath)
}

// StartBaseline runs the baseline server (this program, re-executed with the hidden baseline
// command) serving the files of dir.
func StartBaseline(ctx context.Context, self, dir, logPath string) (*Process, error) {
	return start(ctx, exec.Command(self, "baseline", "--dir", dir, "--addr", "127.0.0.1:0"), logPath)
}

// start runs cmd with its output going to logPath and waits until the log announces its
// listener (and, when cmd has --pprof, its profiling listener).
func start(ctx context.Context, cmd *exec.Cmd, logPath string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	binary := cmd.Path
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	p := &Process{cmd: cmd, log: log, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p.Addr, p.PprofAddr = listeningAddrs(logPath)
		if p.Addr != "" && (p.PprofAddr != "" || !containsFlag(cmd.Args, "--pprof")) {
			return p, nil
		}
		select {
		case err := <-p.done:
			tail, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("%s exited before listening (%v): %s", binary, err, lastLines(string(tail), 5))
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, errors.New("server did not start listening within 60 s")
		}
	}
}

func containsFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag {
			return true
		}
	}
	return false
}

// listeningAddrs reads the JSON log lines {"msg":"listening","addr":...} and
// {"msg":"pprof listening",...} from a server's log.
func listeningAddrs(logPath string) (addr, pprofAddr string) {
	f, err := os.Open(logPath)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Msg {
		case "listening":
			addr = line.Addr
		case "pprof listening":
			pprofAddr = line.Addr
		}
	}
	return addr, pprofAddr
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Pid is the process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop asks the process to shut down and waits for it, killing it after 15 s.
// Stopping twice is harmless.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		p.log.Close()
	})
}

// Memory is a process's resident memory from /proc/<pid>/status.
type Memory struct {
	// RSS is the current resident set (VmRSS), Peak its high-water mark (VmHWM), both in bytes.
	RSS, Peak int64
}

// ReadMemory reads the process's resident set and its high-water mark.
func (p *Process) ReadMemory() (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			m.RSS = kb << 10
		case "VmHWM":
			m.Peak = kb << 10
		}
	}
	return m, nil
}

// CPUTime is the CPU time the process used so far, user and system, from /proc/<pid>/stat.
func (p *Process) CPUTime() (time.Duration, error) {
	_, d, err := procCPUTime(p.Pid())
	return d, err
}

// procCPUTime reads a process's command name and the CPU time it used so far, user and
// system, from /proc/<pid>/stat.
func procCPUTime(pid int) (comm string, cpu time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, err
	}
	// The command name, in parentheses, may hold spaces; the fields after it are fixed.
	head, rest, ok := strings.Cut(string(b), ") ")
	fields := strings.Fields(rest)
	_, comm, _ = strings.Cut(head, "(")
	if !ok || len(fields) < 13 {
		return "", 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	// Linux reports clock ticks of 1/100 s (USER_HZ) on every supported architecture.
	return comm, time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// ResetPeak resets the process's VmHWM to its current resident set (Linux's clear_refs "5"),
// so the next ReadMemory reports the peak of what ran in between.
func (p *Process) ResetPeak() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.Pid()), []byte("5"), 0)
}
