package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// reminderSettingsBody is the reminder schedule's settings page (contract §17).
type reminderSettingsBody struct {
	Schedule credit.ReminderSchedule
	// Current is the schedule as the form writes it: "-3,1,7,14,30", "" when empty.
	Current string
	Form    *form
	// MaxLevels, MinOffset and MaxOffset are the schedule's limits, for the hint.
	MaxLevels, MinOffset, MaxOffset int
}

// formatDays writes a schedule as the form reads it: -3,1,7,14,30.
func formatDays(days []int) string {
	out := make([]string, len(days))
	for i, d := range days {
		out[i] = strconv.Itoa(d)
	}
	return strings.Join(out, ",")
}

// reminderSettings shows the store's reminder schedule, a form to change it, and its audit
// trail, newest first.
func (c *Console) reminderSettings(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showReminderSettings(w, r, v, http.StatusOK, c.takeNotice(r, v), nil)
}

func (c *Console) showReminderSettings(w http.ResponseWriter, r *http.Request, v *visit, status int, notice string, f *form) {
	s, err := c.svc.Stores.ReminderSchedule(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	p := pageFor(v, "Reminder schedule", "settings")
	p.Notice = notice
	p.Body = reminderSettingsBody{Schedule: s, Current: formatDays(s.Days), Form: f,
		MaxLevels: credit.MaxReminderLevels, MinOffset: credit.MinReminderOffset, MaxOffset: credit.MaxReminderOffset}
	c.render(w, r, status, "reminders.html", p)
}

// setReminderSchedule replaces the store's reminder schedule, on its audit trail under the
// member's name; a refused schedule is shown again beside its field, as typed.
func (c *Console) setReminderSchedule(w http.ResponseWriter, r *http.Request, v *visit) {
	days, err := credit.ParseReminderDays(r.PostForm.Get("days"))
	if err == nil {
		_, err = c.svc.Stores.SetReminderSchedule(v.ctx, days)
	}
	if err != nil {
		p := httpapi.Describe(err)
		if p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		c.showReminderSettings(w, r, v, p.Status, "", refusedForm(r.PostForm, p, "days"))
		return
	}
	msg := "Reminder schedule cleared: no reminder is due from now on."
	if len(days) > 0 {
		msg = "Reminder schedule set to " + formatDays(days) + " days from the due date."
	}
	c.done(w, r, v, "/settings/reminders", msg)
}
