package console

import (
	"net/http"

	"github.com/creditd/creditd/credit"
)

// The collections page (contract §17): the day's collection work of the store, read by the
// domain (credit.Reports.Collections): the reminders the sweep emitted today, by level; the
// promises to pay due and broken; the open disputes; each row linking to its company's
// invoice, where staff record, withdraw or resolve.

// reminderLevel is today's reminders of one level.
type reminderLevel struct {
	Level int
	Rows  []credit.CollectionReminder
}

// collectionsBody is the collections page.
type collectionsBody struct {
	Collections credit.Collections
	Levels      []reminderLevel
	// Schedule is the store's reminder schedule as the settings write it, "" when empty.
	Schedule string
}

// collections shows the day's collection work.
func (c *Console) collections(w http.ResponseWriter, r *http.Request, v *visit) {
	col, err := c.svc.Reports.Collections(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	s, err := c.svc.Stores.ReminderSchedule(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	body := collectionsBody{Collections: col, Schedule: formatDays(s.Days)}
	// The domain reads them by level, so each level's rows are together.
	for _, rem := range col.Reminders.Data {
		if n := len(body.Levels); n == 0 || body.Levels[n-1].Level != rem.Reminder.Level {
			body.Levels = append(body.Levels, reminderLevel{Level: rem.Reminder.Level})
		}
		last := &body.Levels[len(body.Levels)-1]
		last.Rows = append(last.Rows, rem)
	}
	p := pageFor(v, "Collections", "collections")
	p.Notice = c.takeNotice(r, v)
	p.Body = body
	c.render(w, r, http.StatusOK, "collections.html", p)
}

// collectionListData is what the "collection-list" snippet renders: one list of invoices.
type collectionListData struct {
	ID, Caption, Empty string
	List               credit.CollectionList[credit.CollectionInvoice]
}
