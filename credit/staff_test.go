package credit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent/staffmember"
	"github.com/creditd/creditd/ent/staffsession"
	"github.com/creditd/creditd/tenant"
)

const staffPassword = "correct horse battery"

// TestCreateStaffChecksItsInput: a staff account needs a name, a plain email (stored in lower
// case, unique across every store, since signing in takes only the email) and a password of
// 12 to 256 characters, which is stored only as an Argon2id hash.
func TestCreateStaffChecksItsInput(t *testing.T) {
	env := credittest.NewService(t)
	mine, theirs := env.MustStore(t, "mine", "EUR"), env.MustStore(t, "theirs", "EUR")
	m := env.MustStaff(t, mine, "Anna Berg", "  Anna@Example.COM ", staffPassword)
	if m.Email != "anna@example.com" || m.Name != "Anna Berg" || m.StoreID != mine || m.DisabledAt != nil {
		t.Fatalf("created %+v", m)
	}
	for _, tc := range []struct {
		name  string
		store string
		in    credit.StaffInput
		param string
	}{
		{"no name", mine, credit.StaffInput{Name: " ", Email: "b@example.com", Password: staffPassword}, "name"},
		{"not an email", mine, credit.StaffInput{Name: "B", Email: "b at example", Password: staffPassword}, "email"},
		{"a display name, not a plain address", mine, credit.StaffInput{Name: "B", Email: "B <b@example.com>", Password: staffPassword}, "email"},
		{"short password", mine, credit.StaffInput{Name: "B", Email: "b@example.com", Password: "elevenchars"}, "password"},
		{"long password", mine, credit.StaffInput{Name: "B", Email: "b@example.com", Password: strings.Repeat("x", 257)}, "password"},
		{"email of this store's member", mine, credit.StaffInput{Name: "B", Email: "anna@example.com", Password: staffPassword}, "email"},
		{"email of another store's member, in another case", theirs, credit.StaffInput{Name: "B", Email: "ANNA@example.com", Password: staffPassword}, "email"},
	} {
		_, err := env.Service.Staff.Create(credittest.Staff(tc.store), tc.in)
		var e *credit.Error
		if !asError(err, &e) || e.Code != credit.CodeValidationFailed || e.Param != tc.param {
			t.Errorf("%s: %v, want validation_failed on %s", tc.name, err, tc.param)
		}
	}
	row, err := env.DB.Ent().StaffMember.Query().Where(staffmember.ID(m.ID)).Only(credittest.Admin())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(row.PasswordHash, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(row.PasswordHash, staffPassword) {
		t.Errorf("stored password hash %q is not an Argon2id hash at the documented parameters", row.PasswordHash)
	}
	// Twelve characters are enough, counted as characters rather than bytes.
	if _, err := env.Service.Staff.Create(credittest.Staff(mine), credit.StaffInput{Name: "C", Email: "c@example.com", Password: "äöüäöüäöüäöü"}); err != nil {
		t.Errorf("a twelve-character password: %v", err)
	}
	if _, err := env.Service.Staff.Create(credittest.Staff(mine), credit.StaffInput{Name: "D", Email: "d@example.com", Password: "äöüäöüäöüäö"}); credit.CodeOf(err) != credit.CodeValidationFailed {
		t.Errorf("an eleven-character password of 22 bytes: %v, want validation_failed", err)
	}
}

// TestSignIn: the right email and password start a session whose token resumes as the staff
// member of their store, under their name; a wrong password, an unknown email and a disabled
// account all get the one same answer; every sign-in makes a new token; only the token's
// SHA-256 is stored.
func TestSignIn(t *testing.T) {
	env := credittest.NewService(t)
	svc := env.Service
	store := env.MustStore(t, "mine", "EUR")
	m := env.MustStaff(t, store, "Anna Berg", "anna@example.com", staffPassword)
	ctx := context.Background()

	token, sess, err := svc.Staff.SignIn(ctx, "ANNA@example.com ", staffPassword, credit.SessionPolicy{})
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	if sess.StaffID != m.ID || sess.StoreID != store || sess.StaffName != "Anna Berg" {
		t.Fatalf("session %+v", sess)
	}
	staffCtx, resumed, err := svc.Staff.ResumeSession(ctx, token, credit.SessionPolicy{})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	v, _ := tenant.FromContext(staffCtx)
	if v.ActorType != tenant.ActorStaff || v.StoreID != store || v.Label != "Anna Berg" || v.IsSystem() || resumed.ID != sess.ID {
		t.Fatalf("viewer %+v, session %+v", v, resumed)
	}

	again, _, err := svc.Staff.SignIn(ctx, "anna@example.com", staffPassword, credit.SessionPolicy{})
	if err != nil || again == token {
		t.Fatalf("second sign-in: token %q (first %q), %v", again, token, err)
	}

	rows, err := env.DB.Ent().StaffSession.Query().All(credittest.Admin())
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.TokenHash == token || row.TokenHash == again || len(row.TokenHash) != 64 {
			t.Errorf("session row stores %q, want only a SHA-256", row.TokenHash)
		}
	}

	other := env.MustStaff(t, store, "Ben Kurz", "ben@example.com", staffPassword)
	if _, err := svc.Staff.Disable(credittest.Staff(store), other.ID); err != nil {
		t.Fatal(err)
	}
	var messages []string
	for name, creds := range map[string][2]string{
		"wrong password":   {"anna@example.com", staffPassword + "!"},
		"unknown email":    {"nobody@example.com", staffPassword},
		"disabled account": {"ben@example.com", staffPassword},
		"empty":            {"", ""},
	} {
		_, _, err := svc.Staff.SignIn(ctx, creds[0], creds[1], credit.SessionPolicy{})
		if credit.CodeOf(err) != credit.CodeUnauthenticated {
			t.Fatalf("%s: %v, want unauthenticated", name, err)
		}
		messages = append(messages, err.Error())
	}
	for _, msg := range messages[1:] {
		if msg != messages[0] {
			t.Errorf("sign-in refusals differ: %q and %q", messages[0], msg)
		}
	}
	if _, _, err := svc.Staff.ResumeSession(ctx, "not a token", credit.SessionPolicy{}); credit.CodeOf(err) != credit.CodeUnauthenticated {
		t.Errorf("made-up token: %v", err)
	}
}

// TestSessionsEnd: a session ends after its idle timeout, after its lifetime however active,
// at sign-out, when its account is disabled and when its password is reset, on the service's
// clock, without sleeping.
func TestSessionsEnd(t *testing.T) {
	env := credittest.NewService(t)
	svc := env.Service
	store := env.MustStore(t, "mine", "EUR")
	m := env.MustStaff(t, store, "Anna Berg", "anna@example.com", staffPassword)
	ctx := context.Background()
	policy := credit.SessionPolicy{IdleTimeout: 2 * time.Hour, Lifetime: 5 * time.Hour}
	signInFor := func(policy credit.SessionPolicy) string {
		t.Helper()
		token, _, err := svc.Staff.SignIn(ctx, "anna@example.com", staffPassword, policy)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	signIn := func() string { t.Helper(); return signInFor(policy) }
	live := func(token string) bool {
		t.Helper()
		_, _, err := svc.Staff.ResumeSession(ctx, token, policy)
		if err != nil && credit.CodeOf(err) != credit.CodeUnauthenticated {
			t.Fatal(err)
		}
		return err == nil
	}

	// The idle timeout, well within a long lifetime.
	idle := signInFor(credit.SessionPolicy{IdleTimeout: 2 * time.Hour, Lifetime: 24 * time.Hour})
	env.Clock.Advance(2*time.Hour - time.Second)
	if !live(idle) {
		t.Fatal("session ended before its idle timeout")
	}
	// Used just now, so the idle timeout counts from here.
	env.Clock.Advance(2*time.Hour - time.Second)
	if !live(idle) {
		t.Fatal("a used session ended before its idle timeout counted from the last use")
	}
	env.Clock.Advance(2 * time.Hour)
	if live(idle) {
		t.Fatal("session lived past its idle timeout")
	}

	active := signIn()
	for i := 0; i < 5; i++ {
		env.Clock.Advance(59 * time.Minute)
		if !live(active) {
			t.Fatalf("active session ended after %d minutes", 59*(i+1))
		}
	}
	env.Clock.Advance(6 * time.Minute) // 5 h 1 min after sign-in
	if live(active) {
		t.Fatal("session lived past its lifetime")
	}

	out := signIn()
	if err := svc.Staff.SignOut(ctx, out); err != nil {
		t.Fatal(err)
	}
	if live(out) {
		t.Fatal("session lived after sign-out")
	}

	reset := signIn()
	if err := svc.Staff.ResetPassword(credittest.Staff(store), m.ID, "a brand new passphrase"); err != nil {
		t.Fatal(err)
	}
	if live(reset) {
		t.Fatal("session lived after a password reset")
	}
	if _, _, err := svc.Staff.SignIn(ctx, "anna@example.com", staffPassword, policy); credit.CodeOf(err) != credit.CodeUnauthenticated {
		t.Fatalf("old password after reset: %v", err)
	}
	disabled, _, err := svc.Staff.SignIn(ctx, "anna@example.com", "a brand new passphrase", policy)
	if err != nil {
		t.Fatalf("new password after reset: %v", err)
	}
	if _, err := svc.Staff.Disable(credittest.Staff(store), m.ID); err != nil {
		t.Fatal(err)
	}
	if live(disabled) {
		t.Fatal("session lived after its account was disabled")
	}
	n, err := env.DB.Ent().StaffSession.Query().Where(staffsession.StaffID(m.ID)).Count(credittest.Admin())
	if err != nil || n != 0 {
		t.Fatalf("sessions left after disable: %d %v", n, err)
	}
}

// TestStaffAccountsStayInTheirStore: staff accounts are managed only by their own store's staff;
// another store's account is not found, and API keys and the system cannot manage them.
func TestStaffAccountsStayInTheirStore(t *testing.T) {
	env := credittest.NewService(t)
	svc := env.Service
	mine, theirs := env.MustStore(t, "mine", "EUR"), env.MustStore(t, "theirs", "EUR")
	m := env.MustStaff(t, mine, "Anna", "anna@example.com", staffPassword)
	env.MustStaff(t, theirs, "Theo", "theo@example.com", staffPassword)
	key := env.MustIssuedKey(t, mine, "erp", credit.AllScopes...)

	list, err := svc.Staff.List(credittest.Staff(mine))
	if err != nil || len(list) != 1 || list[0].ID != m.ID {
		t.Fatalf("my store's staff: %+v %v", list, err)
	}
	other := credittest.Staff(theirs)
	if _, err := svc.Staff.Disable(other, m.ID); !credit.IsNotFound(err) {
		t.Errorf("disabling another store's member: %v, want not_found", err)
	}
	if err := svc.Staff.ResetPassword(other, m.ID, "another passphrase"); !credit.IsNotFound(err) {
		t.Errorf("resetting another store's member: %v, want not_found", err)
	}
	for viewer, ctx := range map[string]context.Context{
		"an API key": tenant.APIKey(context.Background(), mine, key.ID, "erp", credit.AllScopes),
		"the system": credittest.Admin(),
	} {
		if _, err := svc.Staff.Create(ctx, credit.StaffInput{Name: "X", Email: "x@example.com", Password: staffPassword}); credit.CodeOf(err) != credit.CodeInsufficientScope {
			t.Errorf("create by %s: %v", viewer, err)
		}
		if _, err := svc.Staff.List(ctx); credit.CodeOf(err) != credit.CodeInsufficientScope {
			t.Errorf("list by %s: %v", viewer, err)
		}
		if _, err := svc.Staff.Disable(ctx, m.ID); credit.CodeOf(err) != credit.CodeInsufficientScope {
			t.Errorf("disable by %s: %v", viewer, err)
		}
	}
	if got, err := svc.Stores.OwnerOf(context.Background(), m.ID); err != nil || got != mine {
		t.Errorf("owning store of a staff member: %q %v", got, err)
	}
	if _, _, err := svc.Staff.SignIn(context.Background(), "anna@example.com", staffPassword, credit.SessionPolicy{}); err != nil {
		t.Errorf("the member can still sign in: %v", err)
	}
}

// TestNextApplicationStatusesAreTheAcceptedTransitions: the statuses the console offers for an
// application are exactly those Applications.SetStatus accepts from its current status.
func TestNextApplicationStatusesAreTheAcceptedTransitions(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "mine", "EUR")
	staff := credittest.Staff(store)
	// One application in each status, reached along the workflow.
	paths := map[string][]string{
		credit.AppSubmitted: nil,
		credit.AppInReview:  {credit.AppInReview},
		credit.AppNeedsInfo: {credit.AppInReview, credit.AppNeedsInfo},
		credit.AppApproved:  {credit.AppInReview, credit.AppApproved},
		credit.AppRejected:  {credit.AppInReview, credit.AppRejected},
	}
	for _, from := range credit.ApplicationStatuses {
		for _, to := range credit.ApplicationStatuses {
			a := env.MustApplication(t, store, credit.ApplicationInput{BusinessName: "B " + from + " " + to})
			for _, step := range paths[from] {
				if _, _, err := env.Service.Applications.SetStatus(staff, approval(a.ID, step)); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := env.Service.Applications.SetStatus(staff, approval(a.ID, to))
			offered := false
			for _, next := range credit.NextApplicationStatuses(from) {
				offered = offered || next == to
			}
			if offered != (err == nil) {
				t.Errorf("%s → %s: offered %v, accepted: %v", from, to, offered, err)
			}
		}
	}
	if got := credit.NextApplicationStatuses("unknown"); len(got) != 0 {
		t.Errorf("next of an unknown status: %v", got)
	}
}

func approval(id, status string) credit.StatusChange {
	in := credit.StatusChange{ApplicationID: id, Status: status}
	if status == credit.AppApproved {
		in.CreditLimit, in.PaymentTerms = "1000.00", "NET_30"
	}
	return in
}

// TestCompanySearchByName: the console's search is the APIs' (Search: case and accents
// ignored); by name it lists them by name, pages through them with cursors bound to the
// search, and escapes LIKE's wildcards.
func TestCompanySearchByName(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "mine", "EUR")
	for _, name := range []string{"delta hotel", "alpha hotel", "charlie hotel", "bravo inn", "echo 100% hotel", "foxtrot_hotel", "Café Morgenrot"} {
		env.MustCompany(t, store, name, "100")
	}
	staff := credittest.Staff(store)
	list := func(q, cursor string, limit int) credit.Page[credit.Company] {
		t.Helper()
		p, err := env.Service.Companies.List(staff, credit.CompanyListParams{ListParams: credit.ListParams{Limit: &limit, Cursor: cursor}, Search: &q, ByName: true})
		if err != nil {
			t.Fatalf("list %q: %v", q, err)
		}
		return p
	}
	names := func(p credit.Page[credit.Company]) string {
		var out []string
		for _, c := range p.Data {
			out = append(out, c.Name)
		}
		return strings.Join(out, ",")
	}
	first := list("HOTEL", "", 2)
	if names(first) != "alpha hotel,charlie hotel" || first.NextCursor == nil {
		t.Fatalf("first page: %s", names(first))
	}
	second := list("HOTEL", *first.NextCursor, 2)
	if names(second) != "delta hotel,echo 100% hotel" {
		t.Fatalf("second page: %s", names(second))
	}
	third := list("HOTEL", *second.NextCursor, 2)
	if names(third) != "foxtrot_hotel" || third.HasMore {
		t.Fatalf("third page: %s", names(third))
	}
	if got := names(list("0%", "", 10)); got != "echo 100% hotel" {
		t.Errorf("search with %%: %s", got)
	}
	if got := names(list("t_h", "", 10)); got != "foxtrot_hotel" {
		t.Errorf("search with _: %s", got)
	}
	if got := names(list("CAFE", "", 10)); got != "Café Morgenrot" {
		t.Errorf("search without the accent: %s", got)
	}
	// A cursor belongs to its search.
	limit := 2
	inn := "inn"
	if _, err := env.Service.Companies.List(staff, credit.CompanyListParams{ListParams: credit.ListParams{Limit: &limit, Cursor: *first.NextCursor}, Search: &inn, ByName: true}); credit.CodeOf(err) != credit.CodeInvalidParameter {
		t.Errorf("cursor of another search: %v", err)
	}
	if _, err := env.Service.Companies.List(staff, credit.CompanyListParams{ListParams: credit.ListParams{Cursor: *first.NextCursor}}); credit.CodeOf(err) != credit.CodeInvalidParameter {
		t.Errorf("cursor of the search on the API's list: %v", err)
	}
	long := strings.Repeat("x", 101)
	if _, err := env.Service.Companies.List(staff, credit.CompanyListParams{Search: &long}); credit.CodeOf(err) != credit.CodeInvalidParameter {
		t.Errorf("search of 101 characters: %v", err)
	}
	st, err := env.Service.Stores.Current(staff)
	if err != nil || st.ID != store || st.Name != "mine" {
		t.Errorf("current store: %+v %v", st, err)
	}
}

func asError(err error, target **credit.Error) bool {
	e, ok := err.(*credit.Error)
	if ok {
		*target = e
	}
	return ok
}
