package credit

import (
	"bytes"
	"encoding/json"
	"regexp"
	"time"

	"github.com/shopspring/decimal"
)

// What the platform's deliveries say (contract §13): each topic's body read into the ledger
// entry it asks for, or the reason it cannot be applied, in the store's currency.

// platformEvent is what a delivery's body says, or why it cannot be applied.
type platformEvent struct {
	kind       string // the ledger kind; "" when outcome is set before anything is applied
	objectKey  string // "" when the body names no object (unparseable, other topics)
	orderGID   *string
	companyGID string
	amount     decimal.Decimal // signed as the ledger entry
	occurred   time.Time
	dueDays    int
	// outcome, when set, is the final status and reason, known from the body alone.
	outcome, reason string
}

func (ev platformEvent) settled(status, reason string) platformEvent {
	ev.outcome, ev.reason = status, reason
	return ev
}

// platformBody is every member the four topics' bodies have; others are ignored.
type platformBody struct {
	ID           *string         `json:"id"`
	CompanyID    *string         `json:"company_id"`
	OrderID      *string         `json:"order_id"`
	PaymentTerms json.RawMessage `json:"payment_terms"`
	Total        json.RawMessage `json:"total"`
	Amount       json.RawMessage `json:"amount"`
	CreatedAt    *string         `json:"created_at"`
	ProcessedAt  *string         `json:"processed_at"`
	CancelledAt  *string         `json:"cancelled_at"`
}

// parsePlatformEvent reads a delivery's body for topic in a store whose currency is currency.
// It never fails: what cannot be applied is said by the event's outcome.
func parsePlatformEvent(topic string, body []byte, currency string) platformEvent {
	var ev platformEvent
	var idPattern *regexp.Regexp
	var prefix string
	switch topic {
	case TopicOrderCreated:
		ev.kind, idPattern, prefix = KindOrderPlaced, orderGIDPattern, "order:"
	case TopicPaymentCreated:
		ev.kind, idPattern, prefix = KindPayment, paymentGIDPattern, "payment:"
	case TopicRefundCreated:
		ev.kind, idPattern, prefix = KindRefund, refundGIDPattern, "refund:"
	case TopicOrderCancelled:
		ev.kind, idPattern, prefix = KindCancellation, orderGIDPattern, "cancellation:"
	default:
		return ev.settled(InboxIgnored, ReasonUnsupportedTopic)
	}
	unparseable := ev.settled(InboxFailed, ReasonUnparseableBody)
	var b platformBody
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&b); err != nil || dec.More() || b.ID == nil || !idPattern.MatchString(*b.ID) {
		return unparseable
	}
	ev.objectKey = prefix + *b.ID
	unparseable.objectKey = ev.objectKey
	when := b.CreatedAt
	switch topic {
	case TopicOrderCreated, TopicOrderCancelled:
		ev.orderGID = b.ID
	case TopicPaymentCreated, TopicRefundCreated:
		if b.OrderID != nil && !orderGIDPattern.MatchString(*b.OrderID) || topic == TopicRefundCreated && b.OrderID == nil {
			return unparseable
		}
		ev.orderGID = b.OrderID
	}
	switch topic {
	case TopicPaymentCreated:
		when = b.ProcessedAt
	case TopicOrderCancelled:
		when = b.CancelledAt
	}
	if when == nil {
		return unparseable
	}
	at, err := ParseTimestamp(*when)
	if err != nil {
		return unparseable
	}
	ev.occurred = at.Time
	if b.CompanyID == nil {
		return ev.settled(InboxIgnored, ReasonNoCompany)
	}
	if !companyGIDPattern.MatchString(*b.CompanyID) {
		return unparseable
	}
	ev.companyGID = *b.CompanyID
	money := b.Amount
	switch topic {
	case TopicOrderCreated:
		money = b.Total
		var terms *struct {
			Type      string `json:"type"`
			DueInDays *int   `json:"due_in_days"`
		}
		if err := json.Unmarshal(orNull(b.PaymentTerms), &terms); err != nil {
			return unparseable
		}
		if terms == nil {
			return ev.settled(InboxIgnored, ReasonNoPaymentTerms)
		}
		if terms.Type != "NET" || terms.DueInDays == nil || *terms.DueInDays < 0 || *terms.DueInDays > 365 {
			return unparseable
		}
		ev.dueDays = *terms.DueInDays
	case TopicOrderCancelled:
		return ev // the amount is what is still open on the order when it is applied
	}
	amount, reason := parsePlatformMoney(money, currency)
	if reason != "" {
		return ev.settled(InboxFailed, reason)
	}
	if ev.kind != KindOrderPlaced {
		amount = amount.Neg()
	}
	ev.amount = amount
	return ev
}

// orNull is raw, or JSON null when the member was absent.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// parsePlatformMoney reads a positive Money object in currency. It returns the reason it
// cannot: unparseable_body (not a Money object), currency_mismatch, invalid_amount.
func parsePlatformMoney(raw json.RawMessage, currency string) (decimal.Decimal, string) {
	var m *struct {
		Amount   json.RawMessage `json:"amount"`
		Currency *string         `json:"currency"`
	}
	if err := json.Unmarshal(orNull(raw), &m); err != nil || m == nil || m.Currency == nil || len(m.Amount) == 0 {
		return decimal.Decimal{}, ReasonUnparseableBody
	}
	if *m.Currency != currency {
		return decimal.Decimal{}, ReasonCurrencyMismatch
	}
	var text string
	if err := json.Unmarshal(m.Amount, &text); err != nil {
		return decimal.Decimal{}, ReasonInvalidAmount // a number, not a decimal string
	}
	d, err := ParseAmount(text, currency, "amount")
	if err != nil || !d.IsPositive() {
		return decimal.Decimal{}, ReasonInvalidAmount
	}
	return d, ""
}
