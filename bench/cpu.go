package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// cpuMeter reads the CPU time one server has used so far: its own process's and, on
// PostgreSQL, that of the backends serving its connections, which do the work SQLite does
// inside creditd's process.
type cpuMeter struct {
	proc     *Process
	backends *pgBackends // nil when the server has none, or they cannot be read
}

// cpuReading is one reading of a cpuMeter.
type cpuReading struct {
	server   time.Duration
	backends map[int]time.Duration // by backend PID
}

func (m cpuMeter) read(ctx context.Context) (cpuReading, error) {
	var r cpuReading
	var err error
	if r.server, err = m.proc.CPUTime(); err != nil {
		return r, err
	}
	if m.backends != nil {
		r.backends, err = m.backends.read(ctx)
	}
	return r, err
}

// pgBackends finds the PostgreSQL backends of one server by the application_name its
// connections carry, and reads their CPU time from /proc. Attributing by name, rather than
// adding up every postgres process, leaves out what other clients of the same PostgreSQL do
// (other engineers' tests share it here), the harness's own queries, and the background
// processes (WAL writer, checkpointer, autovacuum), which no single server can be charged
// with. It needs PostgreSQL on this machine, in this PID namespace.
type pgBackends struct {
	db  *sql.DB // the harness's connection, under a name of its own
	app string
}

// read returns the CPU time used so far by each backend named b.app.
func (b *pgBackends) read(ctx context.Context) (map[int]time.Duration, error) {
	rows, err := b.db.QueryContext(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", b.app)
	if err != nil {
		return nil, err
	}
	var pids []int
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			rows.Close()
			return nil, err
		}
		pids = append(pids, pid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	cpu := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		comm, d, err := procCPUTime(pid)
		if errors.Is(err, fs.ErrNotExist) {
			continue // it disconnected since the query
		}
		if err != nil {
			return nil, fmt.Errorf("backend %d of %s: %w", pid, b.app, err)
		}
		if comm != "postgres" {
			return nil, fmt.Errorf("backend %d of %s: /proc/%d is %q, not postgres (is PostgreSQL on another machine or in a container?)", pid, b.app, pid, comm)
		}
		cpu[pid] = d
	}
	return cpu, nil
}

// check reports why the backends of b cannot be measured, or nil when at least one is
// connected and readable.
func (b *pgBackends) check(ctx context.Context) error {
	cpu, err := b.read(ctx)
	if err != nil {
		return err
	}
	if len(cpu) == 0 {
		return fmt.Errorf("no connection named %s in pg_stat_activity", b.app)
	}
	return nil
}

// measureCPU runs a measurement and adds the server's CPU time per response to it, its
// backends' included. A backend that connected during the run is charged all its CPU time
// (it all falls within the run); one that disconnected during the run cannot be read any
// more and is counted in BackendsGone, its CPU time lost.
func measureCPU(ctx context.Context, m cpuMeter, run func() Measurement) Measurement {
	before, err1 := m.read(ctx)
	res := run()
	after, err2 := m.read(ctx)
	if err1 != nil || err2 != nil || res.Requests == 0 {
		return res
	}
	var backends time.Duration
	for pid, d := range after.backends {
		backends += d - before.backends[pid]
	}
	for pid := range before.backends {
		if _, ok := after.backends[pid]; !ok {
			res.BackendsGone++
		}
	}
	n := time.Duration(res.Requests)
	res.CPUPerRequest = (after.server - before.server + backends) / n
	if m.backends != nil {
		res.BackendCPUPerRequest = backends / n
	}
	return res
}
