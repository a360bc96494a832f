package credit

import (
	"fmt"

	"github.com/creditd/creditd/ent"
)

// Company is a company as the API shows it.
type Company struct {
	ID                 string    `json:"id"`
	Name               string    `json:"name"`
	PlatformCompanyGID *string   `json:"platform_company_gid"`
	Status             string    `json:"status"`
	PaymentTerms       string    `json:"payment_terms"`
	CreditLimit        Money     `json:"credit_limit"`
	Outstanding        Money     `json:"outstanding"`
	AvailableCredit    Money     `json:"available_credit"`
	Hold               *Hold     `json:"hold"`
	UpdatedAt          Timestamp `json:"updated_at"`

	// ledgerSeq is the sequence number of the company's last ledger entry when the view was
	// made, so that LatestLedgerEntriesOf need not read the company again.
	ledgerSeq int64
}

// Hold is a company's hold, manual or automatic (overdue).
type Hold struct {
	Kind             string     `json:"kind"`
	Note             *string    `json:"note"`
	PlacedAt         Timestamp  `json:"placed_at"`
	PlacedBy         string     `json:"placed_by"`
	PlatformOrderGID *string    `json:"platform_order_gid"`
	DueAt            *Timestamp `json:"due_at"`
}

// LedgerEntry is one ledger entry as the API shows it.
type LedgerEntry struct {
	ID               string    `json:"id"`
	Kind             string    `json:"kind"`
	Amount           Money     `json:"amount"`
	PlatformOrderGID *string   `json:"platform_order_gid"`
	Note             *string   `json:"note"`
	OccurredAt       Timestamp `json:"occurred_at"`
}

// Application is a wholesale application as the API shows it, contact included.
type Application struct {
	ID           string    `json:"id"`
	Status       string    `json:"status"`
	BusinessName string    `json:"business_name"`
	VAT          VAT       `json:"vat"`
	Contact      Contact   `json:"contact"`
	SubmittedAt  Timestamp `json:"submitted_at"`
}

// VAT is an application's VAT number and the result of checking it against a registry.
type VAT struct {
	Number    string     `json:"number"`
	Status    string     `json:"status"`
	Registry  string     `json:"registry"`
	CheckedAt *Timestamp `json:"checked_at"`
}

// Contact is an application's contact person: personal data. After the person's erasure both
// fields are null and Redacted is true.
type Contact struct {
	Name     *string `json:"name"`
	Email    *string `json:"email"`
	Redacted bool    `json:"redacted"`
}

// TimelineEvent is one entry of a company's timeline.
type TimelineEvent struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	Actor      Actor          `json:"actor"`
	OccurredAt Timestamp      `json:"occurred_at"`
	Data       map[string]any `json:"data"`
}

// Actor is who made a write: an API key (by label), a staff member, or the system.
type Actor struct {
	Type  string `json:"type"`
	Label string `json:"label"`
}

// Page is one page of a list, with the contract's envelope.
type Page[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
	// cursor returns the cursor that resumes the list after Data[i], for GraphQL edges. It is
	// computed on demand: each is a signed JSON payload, and REST needs only NextCursor.
	cursor func(i int) string
}

// Cursor returns the cursor that resumes the list after item i.
func (p Page[T]) Cursor(i int) string { return p.cursor(i) }

// PaymentTerms formats a number of days as the API's NET_<days> code.
func PaymentTerms(days int) string { return fmt.Sprintf("NET_%d", days) }

func companyView(c *ent.Company, st *ent.Store) Company {
	cur := st.Currency
	v := Company{
		ID:                 c.ID,
		Name:               c.Name,
		PlatformCompanyGID: c.PlatformCompanyGid,
		Status:             "approved",
		PaymentTerms:       PaymentTerms(c.PaymentTermsDays),
		CreditLimit:        NewMoney(c.CreditLimit, cur),
		Outstanding:        NewMoney(c.Outstanding, cur),
		AvailableCredit:    NewMoney(availableCredit(c.CreditLimit, c.Outstanding, st.BufferPercent, cur), cur),
		UpdatedAt:          At(c.UpdatedAt),
		ledgerSeq:          c.LedgerSeq,
	}
	if c.HoldKind != nil {
		v.Status = "on_hold"
		v.Hold = &Hold{
			Kind:             string(*c.HoldKind),
			Note:             c.HoldNote,
			PlacedAt:         At(deref(c.HoldPlacedAt)),
			PlacedBy:         deref(c.HoldPlacedBy),
			PlatformOrderGID: c.HoldOrderGid,
			DueAt:            atPtr(c.HoldDueAt),
		}
	}
	return v
}

func ledgerEntryView(e *ent.LedgerEntry, currency string) LedgerEntry {
	return LedgerEntry{
		ID:               e.ID,
		Kind:             string(e.Kind),
		Amount:           NewMoney(e.Amount, currency),
		PlatformOrderGID: e.PlatformOrderGid,
		Note:             e.Note,
		OccurredAt:       At(e.OccurredAt),
	}
}

func applicationView(a *ent.Application) Application {
	return Application{
		ID:           a.ID,
		Status:       string(a.Status),
		BusinessName: a.BusinessName,
		VAT: VAT{
			Number:    a.VatNumber,
			Status:    a.VatStatus,
			Registry:  a.VatRegistry,
			CheckedAt: atPtr(a.VatCheckedAt),
		},
		Contact:     Contact{Name: a.ContactName, Email: a.ContactEmail, Redacted: a.ContactRedacted},
		SubmittedAt: At(a.SubmittedAt),
	}
}

func timelineEventView(e *ent.TimelineEvent) TimelineEvent {
	data := e.Data
	if data == nil {
		data = map[string]any{}
	}
	return TimelineEvent{
		ID:         e.ID,
		Type:       e.Type,
		Actor:      Actor{Type: string(e.ActorType), Label: e.ActorLabel},
		OccurredAt: At(e.OccurredAt),
		Data:       data,
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
