package main

import (
	"context"
	"runtime/pprof"
	"sync"

	"golang.org/x/sync/errgroup"
)

// taskLabel is the pprof label that names the task a goroutine of serve works for.
const taskLabel = "task"

// tasks are the goroutines serve starts, in one errgroup that serve joins before it returns:
// none outlives serve, and so none outlives the database, which Main.Close closes once serve
// has returned. They stop in this order:
//
//  1. the servers (the API, the staff console, pprof), when serve's context ends or one of them
//     fails: each stops accepting and drains its requests in flight;
//  2. the background loops (the sweeps, the webhook worker), once every server has returned, so
//     that a request in flight never finds them gone (the console's "send now" hands its work to
//     the worker); a loop's context ends then, which cuts short what it is doing;
//  3. wait returns once every task has, with the first error a server returned.
//
// Each task's goroutine carries the pprof label task=NAME, and so does every goroutine it
// starts (a server's connections, say): a CPU profile taken with --pprof splits by task, and a
// test finds whatever a task left running.
type tasks struct {
	group      *errgroup.Group
	serversCtx context.Context // ends with serve's context or a server's failure
	servers    sync.WaitGroup
	loopsCtx   context.Context // ends once every server has returned
	stopLoops  context.CancelFunc
}

// newTasks returns an empty group whose servers stop when ctx ends.
func newTasks(ctx context.Context) *tasks {
	group, serversCtx := errgroup.WithContext(ctx)
	loopsCtx, stopLoops := context.WithCancel(context.WithoutCancel(ctx))
	return &tasks{group: group, serversCtx: serversCtx, loopsCtx: loopsCtx, stopLoops: stopLoops}
}

// server starts serve, named name, which must return once its context has ended and its
// requests in flight are done. An error it returns stops every other server.
func (t *tasks) server(name string, serve func(context.Context) error) {
	t.servers.Add(1)
	t.group.Go(func() (err error) {
		defer t.servers.Done()
		pprof.Do(t.serversCtx, pprof.Labels(taskLabel, name), func(ctx context.Context) { err = serve(ctx) })
		return err
	})
}

// loop starts run, named name, which must return once its context has ended.
func (t *tasks) loop(name string, run func(context.Context)) {
	t.group.Go(func() error {
		pprof.Do(t.loopsCtx, pprof.Labels(taskLabel, name), run)
		return nil
	})
}

// wait stops the loops once every server has returned, then returns once every task has, with
// the first error a server returned. It must be called once every task is started, and always
// once one is.
func (t *tasks) wait() error {
	t.group.Go(func() error {
		t.servers.Wait()
		t.stopLoops()
		return nil
	})
	return t.group.Wait()
}
