package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/statementpdf"
)

// statementCommand writes a company's statement of account (contract §17) as a PDF, through
// the same operation and the same document as GET /v1/companies/{id}/statement with Accept:
// application/pdf. The file is written beside its name and renamed into place, so that a
// failed run never leaves a file under that name.
func statementCommand() command {
	return command{summary: "write a company's statement of account for the UTC days --from to --to as a PDF to --out (as GET /v1/companies/{id}/statement with Accept: application/pdf)", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "the company's store (required)")
		companyID := fs.String("company", "", "the company, co_… (required)")
		from := fs.String("from", "", "the period's first UTC day, YYYY-MM-DD (required)")
		to := fs.String("to", "", "the period's last UTC day, YYYY-MM-DD, not after today; at most 5 years after --from (required)")
		out := fs.String("out", "", "the PDF file to write (required)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			for _, f := range []struct{ name, value string }{{"store", *store}, {"company", *companyID}, {"from", *from}, {"to", *to}, {"out", *out}} {
				if err := required(f.name, f.value); err != nil {
					return err
				}
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			s, err := env.svc.Reports.Statement(sctx, *companyID, *from, *to)
			if err != nil {
				return err
			}
			size, err := writeStatementPDF(s, *out)
			if err != nil {
				return err
			}
			result := map[string]any{"file": *out, "bytes": size, "company_id": s.Company.ID, "from": s.From, "to": s.To,
				"entries": len(s.Entries), "opening_balance": s.OpeningBalance, "closing_balance": s.ClosingBalance}
			return env.print(result, fmt.Sprintf("wrote the statement of %s (%s) from %s to %s to %s: %d entries, closing balance %s %s",
				s.Company.Name, s.Company.ID, s.From, s.To, *out, len(s.Entries), s.ClosingBalance.Amount, s.ClosingBalance.Currency))
		}
	}}
}

// writeStatementPDF writes s's PDF into a temporary file beside out and renames it into place.
func writeStatementPDF(s credit.Statement, out string) (int, error) {
	var buf bytes.Buffer
	if err := statementpdf.Write(&buf, s); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.partial")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	defer tmp.Close()
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	return buf.Len(), os.Rename(tmp.Name(), out)
}
