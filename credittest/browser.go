package credittest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath finds Debian's Chromium (CREDITD_CHROMIUM overrides). No test tool may download
// a browser of its own: without Chromium the test is skipped, except under CI, where .ci/run
// installs it and its absence is a failure.
func ChromiumPath(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("CREDITD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		tb.Fatal("Chromium is required under CI: install Debian's chromium package (apt-get install -y chromium)")
	}
	tb.Skip("skipping the browser test: Chromium not found; install it with apt-get install -y chromium, or set CREDITD_CHROMIUM")
	return ""
}

// Browser starts headless Chromium with a fresh profile and a window of width × height, and
// returns a chromedp context for it, which the test's cleanup closes. Every host name but
// 127.0.0.1 fails to resolve, so a page that tried to load anything from elsewhere (a CDN, an
// update check) would show it.
func Browser(tb testing.TB, width, height int) context.Context {
	tb.Helper()
	chromium := ChromiumPath(tb)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(chromium),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.UserDataDir(ChromiumProfile(tb)),
			chromedp.WindowSize(width, height),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		)...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	tb.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}

// ChromiumProfile is a fresh Chromium profile directory, removed after the test. Chromium's
// helper processes may still be writing to it for a moment after the browser closed, which
// t.TempDir's cleanup would report as a failure.
func ChromiumProfile(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "creditd-chromium-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		for i := 0; i < 50; i++ {
			if err := os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		tb.Logf("could not remove Chromium's profile %s", dir)
	})
	return dir
}
