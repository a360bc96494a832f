package credit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/mail"
	"strings"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/staffmember"
	"github.com/creditd/creditd/ent/staffsession"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// Staff accounts and their sessions: the people of a store who use the staff console. A staff
// member signs in with an email and a password and then acts as tenant.Staff of their store,
// the same viewer the command line uses, so the data layer scopes everything they see and do
// to their store and the timeline shows their name.
//
// An email is unique across all stores, not per store: signing in takes only an email and a
// password, and an email shared by two stores would make that ambiguous.

// Session lifetimes, unless the console is told otherwise.
const (
	// DefaultSessionIdleTimeout ends a session nobody used for this long.
	DefaultSessionIdleTimeout = 12 * time.Hour
	// DefaultSessionLifetime ends a session this long after sign-in, however active it is.
	DefaultSessionLifetime = 24 * time.Hour
)

// sessionTouchInterval is how often at most a session's last use is written: the idle timeout
// is then exact to a minute, and a busy session costs one write a minute rather than one per
// page.
const sessionTouchInterval = time.Minute

// sessionTokenLen is the number of base62 characters of a session token (about 238 bits).
const sessionTokenLen = 40

// StaffMember describes a staff account, without its password.
type StaffMember struct {
	ID         string     `json:"id"`
	StoreID    string     `json:"store_id"`
	Name       string     `json:"name"`
	Email      string     `json:"email"`
	CreatedAt  Timestamp  `json:"created_at"`
	DisabledAt *Timestamp `json:"disabled_at"`
}

func staffMemberView(m *ent.StaffMember) StaffMember {
	return StaffMember{
		ID:         m.ID,
		StoreID:    m.StoreID,
		Name:       m.Name,
		Email:      m.Email,
		CreatedAt:  At(m.CreatedAt),
		DisabledAt: atPtr(m.DisabledAt),
	}
}

// StaffInput creates a staff account.
type StaffInput struct {
	// Name is shown on the timeline for the member's actions.
	Name string
	// Email signs in; it is stored trimmed and in lower case.
	Email    string
	Password string
}

// normalEmail is the form emails are stored and looked up in.
func normalEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Create creates a staff account in the staff member's store (the command line acts as
// one).
//
// Errors: insufficient_scope (not staff), not_found (store), validation_failed (name, email,
// an email already used by any store's staff, password).
func (s *Staff) Create(ctx context.Context, in StaffInput) (StaffMember, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return StaffMember{}, err
	}
	if _, err := s.stores.viewerStore(ctx); err != nil {
		return StaffMember{}, err
	}
	name := strings.TrimSpace(in.Name)
	if err := checkField(name, "name", 200); err != nil {
		return StaffMember{}, err
	}
	email := normalEmail(in.Email)
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 254 {
		return StaffMember{}, ParamErrorf(CodeValidationFailed, "email", "email must be a plain address such as anna@example.com")
	}
	if err := checkPassword(in.Password); err != nil {
		return StaffMember{}, err
	}
	hash, err := hashPassword(in.Password)
	if err != nil {
		return StaffMember{}, err
	}
	var out StaffMember
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		now := s.clock.Now()
		m, err := tx.StaffMember.Create().
			SetStoreID(v.StoreID).
			SetName(name).
			SetEmail(email).
			SetPasswordHash(hash).
			SetCreatedAt(now).
			SetPasswordChangedAt(now).
			Save(ctx)
		if ent.IsConstraintError(err) {
			return ParamErrorf(CodeValidationFailed, "email", "a staff account with this email already exists")
		}
		if err != nil {
			return err
		}
		out = staffMemberView(m)
		return nil
	})
	return out, err
}

// List lists the staff member's store's staff accounts, oldest first.
//
// Errors: insufficient_scope (not staff), not_found (store).
func (s *Staff) List(ctx context.Context) ([]StaffMember, error) {
	if _, err := requireStaff(ctx); err != nil {
		return nil, err
	}
	if _, err := s.stores.viewerStore(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.Reader(ctx).StaffMember.Query().
		Order(ent.Asc(staffmember.FieldCreatedAt), ent.Asc(staffmember.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]StaffMember, len(rows))
	for i, m := range rows {
		out[i] = staffMemberView(m)
	}
	return out, nil
}

// lockStaffMember reads a staff member of the viewer's store for update.
//
// Errors: not_found.
func (s *Staff) lockStaffMember(ctx context.Context, tx *ent.Tx, id string) (*ent.StaffMember, error) {
	if !ids.HasPrefix(id, "stf") {
		return nil, errNotFound("staff member")
	}
	m, err := tx.StaffMember.Query().Where(staffmember.ID(id), s.db.ForUpdate).Only(ctx)
	if err != nil {
		return nil, notFoundOr(err, "staff member")
	}
	return m, nil
}

// Disable disables a staff account of the staff member's store: it can no longer sign
// in, and its sessions end at once (they are deleted in the same transaction, and every
// request checks the account anyway). Disabling a disabled account changes nothing.
//
// Errors: insufficient_scope (not staff), not_found (unknown or another store's member).
func (s *Staff) Disable(ctx context.Context, id string) (StaffMember, error) {
	if _, err := requireStaff(ctx); err != nil {
		return StaffMember{}, err
	}
	var out StaffMember
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		m, err := s.lockStaffMember(ctx, tx, id)
		if err != nil {
			return err
		}
		if m.DisabledAt == nil {
			if m, err = tx.StaffMember.UpdateOne(m).SetDisabledAt(s.clock.Now()).Save(ctx); err != nil {
				return err
			}
		}
		if _, err := tx.StaffSession.Delete().Where(staffsession.StaffID(m.ID)).Exec(ctx); err != nil {
			return err
		}
		out = staffMemberView(m)
		return nil
	})
	return out, err
}

// ResetPassword sets a new password for a staff account of the staff member's store and
// ends its sessions, since a reset usually means the old password is no longer trusted. It
// does not enable a disabled account.
//
// Errors: insufficient_scope (not staff), not_found (unknown or another store's member),
// validation_failed (password).
func (s *Staff) ResetPassword(ctx context.Context, id, password string) error {
	if _, err := requireStaff(ctx); err != nil {
		return err
	}
	if err := checkPassword(password); err != nil {
		return err
	}
	hash, err := hashPassword(password)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *ent.Tx) error {
		m, err := s.lockStaffMember(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := tx.StaffMember.UpdateOne(m).SetPasswordHash(hash).SetPasswordChangedAt(s.clock.Now()).Exec(ctx); err != nil {
			return err
		}
		_, err = tx.StaffSession.Delete().Where(staffsession.StaffID(m.ID)).Exec(ctx)
		return err
	})
}

// SessionPolicy says how long staff sessions last; zero fields take the defaults.
type SessionPolicy struct {
	// IdleTimeout ends a session not used for this long.
	IdleTimeout time.Duration
	// Lifetime ends a session this long after sign-in, however active.
	Lifetime time.Duration
}

func (p SessionPolicy) withDefaults() SessionPolicy {
	if p.IdleTimeout <= 0 {
		p.IdleTimeout = DefaultSessionIdleTimeout
	}
	if p.Lifetime <= 0 {
		p.Lifetime = DefaultSessionLifetime
	}
	return p
}

// StaffSession is a signed-in staff member as the console sees them.
type StaffSession struct {
	// ID names the session row; it is not the token and grants nothing.
	ID        string
	StaffID   string
	StoreID   string
	StaffName string
	Email     string
	CreatedAt Timestamp
	// ExpiresAt is when the session ends however active it is.
	ExpiresAt Timestamp
	// Notice is the result of the session's last action, waiting to be shown once.
	Notice *string
}

// errSignIn is the one answer to a failed sign-in: an unknown email, a wrong password and a
// disabled account are not told apart.
var errSignIn = Errorf(CodeUnauthenticated, "the email or the password is not correct")

// errNoSession answers a request without a live session.
var errNoSession = Errorf(CodeUnauthenticated, "sign in to continue")

func hashSessionToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// SignIn checks a staff member's email and password and starts a new session, whose token it
// returns: the only time the token exists outside the browser, since only its SHA-256 is
// stored. Every sign-in makes a new token, so a session identifier planted before sign-in is
// never promoted (no session fixation). It also deletes the member's expired sessions.
// Finding the account by email is system work: the email is all there is to go on.
//
// Errors: unauthenticated, the same for an unknown email, a wrong password and a disabled
// account, which all cost one Argon2id computation.
func (s *Staff) SignIn(ctx context.Context, email, password string, policy SessionPolicy) (string, StaffSession, error) {
	policy = policy.withDefaults()
	if len(password) > 4*MaxPasswordLength || len(email) > 320 {
		return "", StaffSession{}, errSignIn
	}
	sys := tenant.System(ctx)
	m, err := s.db.Ent().StaffMember.Query().Where(staffmember.Email(normalEmail(email))).Only(sys)
	if err != nil && !ent.IsNotFound(err) {
		return "", StaffSession{}, err
	}
	hash := decoyHash()
	if m != nil {
		hash = m.PasswordHash
	}
	ok, outdated, err := verifyPassword(hash, password)
	if err != nil {
		return "", StaffSession{}, err
	}
	if m == nil || !ok || m.DisabledAt != nil {
		return "", StaffSession{}, errSignIn
	}
	staff := tenant.Staff(ctx, m.StoreID, m.Name)
	token := ids.Random(sessionTokenLen)
	var out StaffSession
	err = s.db.InTx(staff, func(tx *ent.Tx) error {
		now := s.clock.Now()
		if outdated {
			rehashed, err := hashPassword(password)
			if err != nil {
				return err
			}
			if err := tx.StaffMember.UpdateOneID(m.ID).SetPasswordHash(rehashed).Exec(staff); err != nil {
				return err
			}
		}
		if _, err := tx.StaffSession.Delete().Where(staffsession.StaffID(m.ID), staffsession.Or(
			staffsession.ExpiresAtLTE(now), staffsession.LastSeenAtLTE(now.Add(-policy.IdleTimeout)),
		)).Exec(staff); err != nil {
			return err
		}
		row, err := tx.StaffSession.Create().
			SetStoreID(m.StoreID).
			SetStaffID(m.ID).
			SetTokenHash(hashSessionToken(token)).
			SetCreatedAt(now).
			SetLastSeenAt(now).
			SetExpiresAt(now.Add(policy.Lifetime)).
			Save(staff)
		if err != nil {
			return err
		}
		out = sessionView(row, m)
		return nil
	})
	if err != nil {
		return "", StaffSession{}, err
	}
	return token, out, nil
}

func sessionView(row *ent.StaffSession, m *ent.StaffMember) StaffSession {
	return StaffSession{
		ID:        row.ID,
		StaffID:   m.ID,
		StoreID:   m.StoreID,
		StaffName: m.Name,
		Email:     m.Email,
		CreatedAt: At(row.CreatedAt),
		ExpiresAt: At(row.ExpiresAt),
		Notice:    row.Flash,
	}
}

// ResumeSession turns a session token into the viewer of its staff member and returns ctx
// carrying it (tenant.Staff of their store, under their name). Every call reads the database,
// so a sign-out, a disabled account or a password reset ends the session on every instance at
// once. A session past its idle timeout or its lifetime is deleted. Finding the session by its
// token is system work, as for an API key.
//
// Errors: unauthenticated.
func (s *Staff) ResumeSession(ctx context.Context, token string, policy SessionPolicy) (context.Context, StaffSession, error) {
	policy = policy.withDefaults()
	if len(token) != sessionTokenLen {
		return nil, StaffSession{}, errNoSession
	}
	sys := tenant.System(ctx)
	row, err := s.db.Ent().StaffSession.Query().
		Where(staffsession.TokenHash(hashSessionToken(token))).
		WithStaff().
		Only(sys)
	if ent.IsNotFound(err) {
		return nil, StaffSession{}, errNoSession
	}
	if err != nil {
		return nil, StaffSession{}, err
	}
	m := row.Edges.Staff
	now := s.clock.Now()
	if m == nil || m.DisabledAt != nil || !now.Before(row.ExpiresAt) || now.Sub(row.LastSeenAt) >= policy.IdleTimeout {
		_ = s.db.InTx(sys, func(tx *ent.Tx) error {
			return tx.StaffSession.DeleteOneID(row.ID).Exec(sys)
		})
		return nil, StaffSession{}, errNoSession
	}
	staff := tenant.Staff(ctx, m.StoreID, m.Name)
	if now.Sub(row.LastSeenAt) >= sessionTouchInterval {
		// A failure to record the use is not the request's problem; the next one retries.
		_ = s.db.InTx(staff, func(tx *ent.Tx) error {
			return tx.StaffSession.UpdateOneID(row.ID).SetLastSeenAt(now).Exec(staff)
		})
	}
	return staff, sessionView(row, m), nil
}

// SignOut ends the session of token, if there is one; an unknown or expired token is not an
// error, since the result is the same: no session.
func (s *Staff) SignOut(ctx context.Context, token string) error {
	if len(token) != sessionTokenLen {
		return nil
	}
	sys := tenant.System(ctx)
	return s.db.InTx(sys, func(tx *ent.Tx) error {
		_, err := tx.StaffSession.Delete().Where(staffsession.TokenHash(hashSessionToken(token))).Exec(sys)
		return err
	})
}

// SetSessionNotice keeps the result of an action on the staff member's session, for the page
// they are sent to next (POST-redirect-GET), whichever instance serves it. An empty notice
// clears it, once shown.
//
// Errors: insufficient_scope (not staff), not_found (no such session in the store).
func (s *Staff) SetSessionNotice(ctx context.Context, sessionID, notice string) error {
	if _, err := requireStaff(ctx); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *ent.Tx) error {
		u := tx.StaffSession.Update().Where(staffsession.ID(sessionID))
		if notice == "" {
			u.ClearFlash()
		} else {
			u.SetFlash(notice)
		}
		n, err := u.Save(ctx)
		if err == nil && n == 0 {
			return errNotFound("session")
		}
		return err
	})
}
