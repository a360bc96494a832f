package credit

import (
	"context"
	"crypto/rand"
	"strings"

	"github.com/creditd/creditd/ent"
)

// StoreInfo describes a store.
type StoreInfo struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Currency      string    `json:"currency"`
	BufferPercent int       `json:"buffer_percent"`
	CreatedAt     Timestamp `json:"created_at"`
}

// DefaultBufferPercent is the safety buffer a store gets unless told otherwise (contract §5).
const DefaultBufferPercent = 5

// CreateStore creates a store with its currency and safety buffer (admin side).
//
// Errors: validation_failed (name, currency, buffer_percent).
func (s *Service) CreateStore(ctx context.Context, name, currency string, bufferPercent int) (StoreInfo, error) {
	name = strings.TrimSpace(name)
	if err := checkField(name, "name", 200); err != nil {
		return StoreInfo{}, err
	}
	if _, ok := MinorDigits(currency); !ok {
		return StoreInfo{}, ParamErrorf(CodeValidationFailed, "currency", "currency must be an ISO 4217 code the service knows, such as EUR, USD, JPY or KWD")
	}
	if bufferPercent < 0 || bufferPercent > 50 {
		return StoreInfo{}, ParamErrorf(CodeValidationFailed, "buffer_percent", "buffer percent must be between 0 and 50")
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return StoreInfo{}, err
	}
	var out StoreInfo
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		st, err := tx.Store.Create().
			SetName(name).
			SetCurrency(currency).
			SetBufferPercent(bufferPercent).
			SetCursorSecret(secret).
			SetCreatedAt(s.Now()).
			Save(ctx)
		if err != nil {
			return err
		}
		out = StoreInfo{ID: st.ID, Name: st.Name, Currency: st.Currency, BufferPercent: st.BufferPercent, CreatedAt: At(st.CreatedAt)}
		return nil
	})
	return out, err
}
