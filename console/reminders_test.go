package console_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
)

// TestReminderSchedule: the settings page shows the store's empty schedule; a refused one is
// shown beside its field as typed and changes nothing; a good one is set, on the audit trail
// under the member's name with what it replaced, and shown; an empty one clears it.
func TestReminderSchedule(t *testing.T) {
	e := newInvoiceEnv(t)
	b := e.b
	b.get("/settings/api").wantText(t, `href="/settings/reminders"`)
	b.get("/settings/reminders").wantStatus(t, http.StatusOK).wantText(t, "no reminders", "The schedule was never changed.")

	for _, tc := range []struct{ days, want string }{
		{"-3, 1, 7, soon", `id="reminder-days-error">Days must be whole numbers of days separated by commas, such as -3,1,7,14,30; " soon" is not one.`},
		{"7,1", `id="reminder-days-error">Days must be strictly increasing: 1 follows 7.`},
		{"-31,1", `id="reminder-days-error">Days: offset -31 is out of range`},
	} {
		b.post("/settings/reminders", url.Values{"days": {tc.days}}).wantStatus(t, http.StatusUnprocessableEntity).
			wantText(t, tc.want, `value="`+tc.days+`"`).wantNoText(t, `<div class="alert" role="alert">`)
	}
	s, err := e.Service.Stores.ReminderSchedule(credittest.Staff(e.store))
	if err != nil || len(s.Days) != 0 || len(s.Changes) != 0 {
		t.Fatalf("after refusals: %+v %v", s, err)
	}

	b.follow(b.post("/settings/reminders", url.Values{"days": {"-3, 1,7,14,30"}})).
		wantText(t, "Reminder schedule set to -3,1,7,14,30 days from the due date.", `value="-3,1,7,14,30"`, "<td>Anna Berg</td>")
	e.Clock.Advance(time.Minute)
	b.follow(b.post("/settings/reminders", url.Values{"days": {""}})).
		wantText(t, "Reminder schedule cleared", "no reminders")
	s, err = e.Service.Stores.ReminderSchedule(credittest.Staff(e.store))
	if err != nil || len(s.Days) != 0 || len(s.Changes) != 2 || !slices.Equal(s.Changes[1].Days, []int{-3, 1, 7, 14, 30}) || s.Changes[1].ChangedBy != "Anna Berg" {
		t.Fatalf("the schedule and its trail: %+v %v", s, err)
	}
}
