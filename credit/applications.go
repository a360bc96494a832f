package credit

import (
	"context"
	"errors"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/application"
	"github.com/creditd/creditd/ent/applicationchange"
	"github.com/creditd/creditd/ids"
)

// Application statuses.
const (
	AppSubmitted = "submitted"
	AppInReview  = "in_review"
	AppNeedsInfo = "needs_info"
	AppApproved  = "approved"
	AppRejected  = "rejected"
)

// applicationTransitions are the admin side's allowed status changes (contract §5):
// submitted → in_review → needs_info ↔ in_review → approved | rejected.
var applicationTransitions = map[string][]string{
	AppSubmitted: {AppInReview},
	AppInReview:  {AppNeedsInfo, AppApproved, AppRejected},
	AppNeedsInfo: {AppInReview},
}

// ApplicationStatuses lists the five statuses in workflow order, for a status filter.
var ApplicationStatuses = []string{AppSubmitted, AppInReview, AppNeedsInfo, AppApproved, AppRejected}

// NextApplicationStatuses returns the statuses an application in status may move to (contract
// §5), so that the staff console offers exactly the transitions Applications.SetStatus accepts;
// none for an approved or rejected application, or an unknown status.
func NextApplicationStatuses(status string) []string {
	return slices.Clone(applicationTransitions[status])
}

// vatStatuses are the values vat.status may take (contract §5).
var vatStatuses = map[string]bool{"valid": true, "invalid": true, "unverified": true, "unavailable": true}

// Application is a wholesale application as the API shows it, contact included.
type Application struct {
	ID           string    `json:"id"`
	Status       string    `json:"status"`
	BusinessName string    `json:"business_name"`
	VAT          VAT       `json:"vat"`
	Contact      Contact   `json:"contact"`
	SubmittedAt  Timestamp `json:"submitted_at"`
	// CompanyID is the company an approval created, for the console's link; not in the JSON.
	CompanyID *string `json:"-"`
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
		CompanyID:   a.CompanyID,
	}
}

// ApplicationListParams are the inputs of Applications.List.
type ApplicationListParams struct {
	ListParams
	// Status is "" or one of the five application statuses.
	Status string
}

// List lists the viewer's store's applications, newest submitted_at first.
//
// Errors: insufficient_scope, invalid_parameter (status, limit, cursor).
func (s *Applications) List(ctx context.Context, p ApplicationListParams) (Page[Application], error) {
	if err := requireScope(ctx, ScopeReadApplications); err != nil {
		return Page[Application]{}, err
	}
	n, err := pageSize(p.Limit)
	if err != nil {
		return Page[Application]{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return Page[Application]{}, err
	}
	q := s.db.Reader(ctx).Application.Query()
	if p.Status != "" {
		if err := application.StatusValidator(application.Status(p.Status)); err != nil {
			return Page[Application]{}, ParamErrorf(CodeInvalidParameter, "status", "status must be one of submitted, in_review, needs_info, approved, rejected")
		}
		q.Where(application.StatusEQ(application.Status(p.Status)))
	}
	list := "applications|" + p.Status
	if p.Cursor != "" {
		c, err := decodeCursor(st.CursorSecret, list, p.Cursor)
		if err != nil {
			return Page[Application]{}, err
		}
		t := time.UnixMicro(c.Time).UTC()
		q.Where(application.Or(application.SubmittedAtLT(t), application.And(application.SubmittedAtEQ(t), application.IDLT(c.ID))))
	}
	rows, err := q.Order(ent.Desc(application.FieldSubmittedAt), ent.Desc(application.FieldID)).Limit(n + 1).All(ctx)
	if err != nil {
		return Page[Application]{}, err
	}
	return makePage(rows, n, applicationView, func(a *ent.Application) string {
		return encodeCursor(st.CursorSecret, cursorPayload{List: list, Time: a.SubmittedAt.UnixMicro(), ID: a.ID})
	}), nil
}

// Get returns one application of the viewer's store.
//
// Errors: insufficient_scope, not_found.
func (s *Applications) Get(ctx context.Context, id string) (Application, error) {
	if err := requireScope(ctx, ScopeReadApplications); err != nil {
		return Application{}, err
	}
	if !ids.HasPrefix(id, "app") {
		return Application{}, errNotFound("application")
	}
	a, err := s.db.Reader(ctx).Application.Get(ctx, id)
	if err != nil {
		return Application{}, notFoundOr(err, "application")
	}
	return applicationView(a), nil
}

// ApplicationInput records an application from the admin side.
type ApplicationInput struct {
	BusinessName string
	VATNumber    string
	VATStatus    string
	VATRegistry  string
	ContactName  string
	ContactEmail string
	SubmittedAt  *Timestamp
}

// Create records a wholesale application in the staff member's store.
//
// Errors: insufficient_scope (not staff), not_found (store), validation_failed.
func (s *Applications) Create(ctx context.Context, in ApplicationInput) (Application, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return Application{}, err
	}
	if _, err := s.stores.viewerStore(ctx); err != nil {
		return Application{}, err
	}
	if in.VATStatus == "" {
		in.VATStatus = "unverified"
	}
	if in.VATRegistry == "" {
		in.VATRegistry = "VIES"
	}
	for _, f := range []struct {
		value, param string
		max          int
	}{
		{in.BusinessName, "business_name", 500},
		{in.VATNumber, "vat_number", 64},
		{in.VATRegistry, "vat_registry", 32},
		{in.ContactName, "contact_name", 200},
	} {
		if err := checkField(f.value, f.param, f.max); err != nil {
			return Application{}, err
		}
	}
	if !vatStatuses[in.VATStatus] {
		return Application{}, ParamErrorf(CodeValidationFailed, "vat_status", "VAT status must be valid, invalid, unverified or unavailable")
	}
	if addr, err := mail.ParseAddress(in.ContactEmail); err != nil || addr.Address != in.ContactEmail || len(in.ContactEmail) > 254 {
		return Application{}, ParamErrorf(CodeValidationFailed, "contact_email", "contact email must be a plain address such as buyer@example.com")
	}
	now := s.clock.Now()
	submitted := now
	if in.SubmittedAt != nil {
		submitted = in.SubmittedAt.Time
	}
	var checkedAt *time.Time
	if in.VATStatus != "unverified" {
		checkedAt = &now
	}
	var out Application
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		a, err := tx.Application.Create().
			SetStoreID(v.StoreID).
			SetBusinessName(strings.TrimSpace(in.BusinessName)).
			SetVatNumber(strings.TrimSpace(in.VATNumber)).
			SetVatStatus(in.VATStatus).
			SetVatRegistry(in.VATRegistry).
			SetNillableVatCheckedAt(checkedAt).
			SetContactName(in.ContactName).
			SetContactEmail(in.ContactEmail).
			SetSubmittedAt(submitted).
			SetUpdatedAt(now).
			Save(ctx)
		if err != nil {
			return err
		}
		out = applicationView(a)
		err = s.events.emit(ctx, tx, a.StoreID, EventTypeApplicationCreated, applicationEventView(a), nil)
		return err
	})
	return out, err
}

// StatusChange moves an application along its workflow (admin side). Approval needs the new
// company's credit limit and payment terms, and creates the company.
type StatusChange struct {
	ApplicationID      string
	Status             string
	CreditLimit        string
	PaymentTerms       string
	PlatformCompanyGID string
}

// SetStatus changes an application's status along the contract's transitions; on
// approval it creates the company in the same transaction and returns it. Only staff may:
// "Approval and rejection are not available through the API".
//
// Errors: insufficient_scope (not staff), not_found, validation_failed (status, a refused
// transition, approval terms), invalid_amount, limit_below_zero.
func (s *Applications) SetStatus(ctx context.Context, in StatusChange) (Application, *Company, error) {
	if _, err := requireStaff(ctx); err != nil {
		return Application{}, nil, err
	}
	var out Application
	var created *Company
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		created = nil
		if !ids.HasPrefix(in.ApplicationID, "app") {
			return errNotFound("application")
		}
		a, err := tx.Application.Get(ctx, in.ApplicationID)
		if err != nil {
			return notFoundOr(err, "application")
		}
		if application.StatusValidator(application.Status(in.Status)) != nil {
			return ParamErrorf(CodeValidationFailed, "status", "status must be one of submitted, in_review, needs_info, approved, rejected")
		}
		from := string(a.Status)
		allowed := false
		for _, to := range applicationTransitions[from] {
			allowed = allowed || to == in.Status
		}
		if !allowed {
			next := applicationTransitions[from]
			if len(next) == 0 {
				return ParamErrorf(CodeValidationFailed, "status", "an application cannot go from %s to %s: %s is final", from, in.Status, from)
			}
			return ParamErrorf(CodeValidationFailed, "status", "an application cannot go from %s to %s: from %s it can go to %s", from, in.Status, from, strings.Join(next, " or "))
		}
		approving := in.Status == AppApproved
		if !approving && (in.CreditLimit != "" || in.PaymentTerms != "" || in.PlatformCompanyGID != "") {
			return ParamErrorf(CodeValidationFailed, "status", "credit limit, payment terms and company GID are given only when approving")
		}
		update := tx.Application.UpdateOne(a).SetStatus(application.Status(in.Status)).SetUpdatedAt(s.clock.Now())
		if approving {
			if in.CreditLimit == "" || in.PaymentTerms == "" {
				return ParamErrorf(CodeValidationFailed, "credit_limit", "approving needs the new company's credit limit and payment terms")
			}
			var gid *string
			if in.PlatformCompanyGID != "" {
				gid = &in.PlatformCompanyGID
			}
			st, err := s.stores.storeByID(ctx, tx.Client(), a.StoreID)
			if err != nil {
				return err
			}
			c, err := s.companies.createCompany(ctx, tx, st, a.BusinessName, gid, in.PaymentTerms, in.CreditLimit)
			if err != nil {
				return err
			}
			view := companyView(c, st)
			created = &view
			update.SetCompanyID(c.ID)
			// The company's timeline starts with its approval, under the approver's name.
			if err := s.events.recordEvent(ctx, tx, c, TimelineApplicationApproved, map[string]any{
				"application_id":       a.ID,
				"credit_limit":         view.CreditLimit,
				"payment_terms":        view.PaymentTerms,
				"platform_company_gid": gid,
			}); err != nil {
				return err
			}
		}
		a, err = update.Save(ctx)
		if err != nil {
			return err
		}
		// The application's history, under the actor's name, numbered after its changes so
		// far: the update above holds the application's row, so two changes take turns.
		seq, err := tx.ApplicationChange.Query().Where(applicationchange.ApplicationID(a.ID)).Count(ctx)
		if err != nil {
			return err
		}
		actor := actorOf(ctx)
		change := tx.ApplicationChange.Create().SetStoreID(a.StoreID).SetApplicationID(a.ID).SetSeq(seq + 1).
			SetFromStatus(from).SetToStatus(in.Status).SetActorType(actor.Type).SetActorLabel(actor.Label).
			SetOccurredAt(s.clock.Now())
		if created != nil {
			change.SetCompanyID(created.ID)
		}
		if err := change.Exec(ctx); err != nil {
			return err
		}
		out = applicationView(a)
		// The events last (where writers run concurrently they are inserted at the commit
		// anyway, and lock the store's event counter until then).
		if created != nil {
			if err := s.events.emit(ctx, tx, a.StoreID, EventTypeCompanyCreated, *created, nil); err != nil {
				return err
			}
		}
		err = s.events.emit(ctx, tx, a.StoreID, EventTypeApplicationStatusChanged, applicationEventView(a), map[string]any{"status": from})
		return err
	})
	return out, created, s.companies.nameGIDHolder(ctx, err)
}

// ApplicationChange is one status change of an application and who made it.
type ApplicationChange struct {
	From, To   string
	CompanyID  *string
	Actor      Actor
	OccurredAt Timestamp
}

// History returns an application's status changes, newest first, with who made each.
//
// Errors: insufficient_scope (not staff), not_found.
func (s *Applications) History(ctx context.Context, id string) ([]ApplicationChange, error) {
	if _, err := requireStaff(ctx); err != nil {
		return nil, err
	}
	client := s.db.Reader(ctx)
	if !ids.HasPrefix(id, "app") {
		return nil, errNotFound("application")
	}
	if exists, err := client.Application.Query().Where(application.ID(id)).Exist(ctx); err != nil || !exists {
		if err == nil {
			err = errNotFound("application")
		}
		return nil, err
	}
	rows, err := client.ApplicationChange.Query().Where(applicationchange.ApplicationID(id)).
		Order(ent.Desc(applicationchange.FieldSeq)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ApplicationChange, len(rows))
	for i, r := range rows {
		out[i] = ApplicationChange{From: r.FromStatus, To: r.ToStatus, CompanyID: r.CompanyID,
			Actor: Actor{Type: r.ActorType, Label: r.ActorLabel}, OccurredAt: At(r.OccurredAt)}
	}
	return out, nil
}

// ApprovalErrors checks the terms an approval would create the company with, each field on
// its own, and returns every refusal at once (credit_limit, payment_terms,
// platform_company_gid), in that order, so that a form can show each beside its field. A GID
// another company has is Applications.SetStatus's to find. Nothing is written.
func ApprovalErrors(creditLimit, paymentTerms, gid, currency string) []error {
	var errs []error
	if creditLimit == "" {
		errs = append(errs, ParamErrorf(CodeValidationFailed, "credit_limit", "approving needs the new company's credit limit"))
	}
	var gidp *string
	if gid != "" {
		gidp = &gid
	}
	_, _, terms := companyTermsErrors(gidp, paymentTerms, creditLimit, currency)
	for _, err := range terms {
		if p := paramOf(err); p != "payment_terms" && p != "platform_company_gid" {
			if creditLimit == "" {
				continue // already refused above
			}
			err = renameParam(err, "credit_limit")
		}
		errs = append(errs, err)
	}
	order := map[string]int{"credit_limit": 0, "payment_terms": 1, "platform_company_gid": 2}
	slices.SortStableFunc(errs, func(a, b error) int { return order[paramOf(a)] - order[paramOf(b)] })
	return errs
}

// renameParam returns err naming param instead of the parameter it named.
func renameParam(err error, param string) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Param = param
		return &c
	}
	return err
}

// OfCompany returns the ID of the application whose approval created the company,
// "" when it was created otherwise: the way back from a company to its application.
//
// Errors: insufficient_scope (not staff), not_found (company).
func (s *Applications) OfCompany(ctx context.Context, companyID string) (string, error) {
	if _, err := requireStaff(ctx); err != nil {
		return "", err
	}
	client := s.db.Reader(ctx)
	c, err := s.companies.loadCompany(ctx, client, companyID)
	if err != nil {
		return "", err
	}
	ids, err := client.Application.Query().Where(application.CompanyID(c.ID)).Limit(1).IDs(ctx)
	if err != nil || len(ids) == 0 {
		return "", err
	}
	return ids[0], nil
}

// ErasePerson carries out a data-protection erasure of the person with this email in the staff
// member's store: their contact name and email are overwritten with nulls on every
// application, which then shows as redacted, and the overwritten values are purged from the
// database files. It returns how many applications were changed.
//
// Errors: insufficient_scope (not staff), not_found (store), validation_failed (email).
func (s *Applications) ErasePerson(ctx context.Context, email string) (int, error) {
	if _, err := requireStaff(ctx); err != nil {
		return 0, err
	}
	if _, err := s.stores.viewerStore(ctx); err != nil {
		return 0, err
	}
	email = strings.TrimSpace(email)
	if errs := ErasureErrors(email, true); len(errs) > 0 {
		return 0, errs[0]
	}
	var n int
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		var err error
		n, err = tx.Application.Update().
			Where(application.ContactEmailEqualFold(email)).
			ClearContactName().
			ClearContactEmail().
			SetContactRedacted(true).
			SetUpdatedAt(s.clock.Now()).
			Save(ctx)
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := s.db.PurgeErased(ctx); err != nil {
		return n, err
	}
	return n, nil
}
