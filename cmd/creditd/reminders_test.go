package main

import (
	"strings"
	"testing"
)

// TestReminderCommands: reminders set and show the store's schedule with its trail, refuse a bad
// schedule (exit 2, nothing written), and reminders sweep --now emits what is due as of then.
func TestReminderCommands(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	res := d.json(t, "reminders", "set", "--store", d.store, "--days", "-3,1,7,14,30", "--staff", "Olga")
	if days, _ := res["days"].([]any); len(days) != 5 || days[0] != float64(-3) {
		t.Errorf("reminders set: %v", res)
	}
	out := d.run(t, "reminders", "show", "--store", d.store).mustSucceed(t).stdout
	if !strings.Contains(out, "reminder schedule: -3,1,7,14,30") || !strings.Contains(out, "Olga: -3,1,7,14,30 (was none)") {
		t.Errorf("reminders show: %q", out)
	}
	for _, days := range []string{"1,2,3,4,5,6,7,8,9,10,11", "7,1", "-31", "1,x"} {
		before := d.dump(t)
		if r := d.run(t, "reminders", "set", "--store", d.store, "--days", days); r.code != exitBadInput || !strings.Contains(r.stderr, "days") {
			t.Errorf("reminders set --days %s: exit %d, stderr %q", days, r.code, r.stderr)
		}
		if d.dump(t) != before {
			t.Errorf("reminders set --days %s wrote something", days)
		}
	}

	co := d.json(t, "company", "create", "--store", d.store, "--name", "Buyer", "--platform-company-gid", "gid://platform/Company/1",
		"--payment-terms", "NET_30", "--credit-limit", "100.00")["id"].(string)
	d.run(t, "ledger", "record", "--company", co, "--kind", "order_placed", "--amount", "40.00", "--order", "gid://platform/Order/1").mustSucceed(t)
	// Due 2026-04-01T09:00Z; as of the 10th, levels 1 to 3 have fallen due: one reminder (3).
	sweep := d.json(t, "reminders", "sweep", "--now", "2026-04-10T00:00:00Z")
	if sweep["reminders"] != float64(1) {
		t.Errorf("reminders sweep: %v", sweep)
	}
	if again := d.json(t, "reminders", "sweep", "--now", "2026-04-10T00:00:00Z"); again["reminders"] != float64(0) {
		t.Errorf("reminders sweep again: %v", again)
	}
}
