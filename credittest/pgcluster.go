package credittest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// PGCluster is a private PostgreSQL server in a temporary directory, for tests that stop and
// start it (the shared server's lifecycle is never touched). It runs as the postgres user when
// the test runs as root, since PostgreSQL refuses root.
type PGCluster struct {
	dir  string
	bin  string
	port int
	tb   testing.TB
}

// NewPGCluster initialises and starts a cluster on a free port, or skips the test (fails under
// CI) when PostgreSQL's server programs are not installed. It stops with the test.
func NewPGCluster(tb testing.TB) *PGCluster {
	tb.Helper()
	bin := pgBinDir()
	if bin == "" {
		if os.Getenv("CI") != "" {
			tb.Fatal("PostgreSQL's initdb and pg_ctl are required under CI")
		}
		tb.Skip("skipping: PostgreSQL's initdb and pg_ctl are not installed")
	}
	dir, err := os.MkdirTemp("", "creditd-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c := &PGCluster{dir: filepath.Join(dir, "data"), bin: bin, port: port, tb: tb}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Skip("skipping: running as root and there is no postgres user to run PostgreSQL as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			tb.Fatal(err)
		}
	}
	c.run("initdb", "-D", c.dir, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
	c.Start()
	tb.Cleanup(func() { c.Stop("immediate") })
	return c
}

// URL is the cluster's postgres database.
func (c *PGCluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Start starts the server and waits until it accepts connections.
func (c *PGCluster) Start() {
	c.tb.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off", c.port, filepath.Dir(c.dir))
	c.run("pg_ctl", "-D", c.dir, "-o", opts, "-l", filepath.Join(filepath.Dir(c.dir), "log"), "-w", "start")
}

// Stop stops the server in mode fast (sessions are told and ended) or immediate (the server
// dies without a word, as on a crash), and waits until it is down.
func (c *PGCluster) Stop(mode string) {
	c.tb.Helper()
	c.run("pg_ctl", "-D", c.dir, "-m", mode, "-w", "stop")
}

func (c *PGCluster) run(prog string, args ...string) {
	c.tb.Helper()
	path := filepath.Join(c.bin, prog)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		c.tb.Fatalf("%s: %v\n%s", prog, err, out)
	}
}

// pgBinDir finds PostgreSQL's server programs: pg_config's bindir, else Debian's layout.
func pgBinDir() string {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := string(out[:len(out)-1])
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return ""
	}
	return filepath.Dir(matches[len(matches)-1])
}
