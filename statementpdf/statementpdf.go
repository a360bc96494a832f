// Package statementpdf writes a company's statement of account (credit.Statement, contract §17)
// as a PDF: A4, the store, the company and its GID, the period, the opening and closing
// balances, the entries with their running balance, the totals, the aging and the open
// invoices, amounts in the store's locale (credit.FormatLocalAmount), "Page N of M" on every
// page. REST's GET /v1/companies/{id}/statement with Accept: application/pdf and
// `creditd statement` both write it here, from the same statement as the JSON.
//
// The output depends on the statement only: the fonts are the Go fonts compiled into the
// binary (golang.org/x/image/font/gofont, BSD licence), and the document carries no creation
// time, so the same statement gives the same bytes on every machine.
package statementpdf

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signintech/gopdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/creditd/creditd/credit"
)

// ContentType is the media type of the document.
const ContentType = "application/pdf"

// The page: A4 in points, its margins, and the heights of what is drawn on it.
const (
	pageW, pageH = 595.28, 841.89
	margin       = 40.0
	contentW     = pageW - 2*margin
	rowH         = 13.0
	bodySize     = 8.5
	headerBottom = 128.0 // where the page's content starts below its header
	footerTop    = pageH - margin - 14
)

// column is one column of a table: its heading, width and whether its cells are numbers
// (right-aligned).
type column struct {
	heading string
	width   float64
	number  bool
}

var (
	entryColumns = []column{{"Date (UTC)", 80, false}, {"Kind", 82, false}, {"Order", 118, false},
		{"Note", 85, false}, {"Amount", 75, true}, {"Balance", 75, true}}
	agingColumns = []column{{"Current", 86, true}, {"1-30 days", 86, true}, {"31-60 days", 86, true},
		{"61-90 days", 86, true}, {"Over 90 days", 86, true}, {"Total", 85, true}}
	invoiceColumns = []column{{"Order", 140, false}, {"Issued (UTC)", 70, false}, {"Due (UTC)", 70, false},
		{"Days overdue", 60, true}, {"Amount", 87, true}, {"Open", 88, true}}
)

// kindLabels name the ledger's kinds for people.
var kindLabels = map[string]string{
	credit.KindOrderPlaced:    "Order",
	credit.KindPayment:        "Payment",
	credit.KindRefund:         "Refund",
	credit.KindCancellation:   "Cancellation",
	credit.KindAdjustment:     "Adjustment",
	credit.KindOpeningBalance: "Opening balance",
}

// line is one line of the document's body: a section heading, a table's heading row, a row
// of cells, or a label with a value. Pages are made of lines, so the number of pages is known
// before the first is drawn ("Page N of M").
type line struct {
	kind    lineKind
	text    string   // heading, or label
	cells   []string // row cells, or the value of a label in cells[0]
	columns []column
	bold    bool
}

type lineKind int

const (
	lineHeading lineKind = iota
	lineTableHead
	lineRow
	lineLabel
	lineGap
)

func (l line) height() float64 {
	switch l.kind {
	case lineHeading:
		return 20
	case lineGap:
		return 8
	}
	return rowH
}

// Write writes s as a PDF to w.
//
// Errors: w's, and the PDF library's (a font it cannot read, which the embedded fonts are not).
func Write(w io.Writer, s credit.Statement) error {
	pdf := &gopdf.GoPdf{}
	pdf.Start(gopdf.Config{PageSize: *gopdf.PageSizeA4, Unit: gopdf.UnitPT})
	pdf.SetInfo(gopdf.PdfInfo{
		Title:    "Statement of account " + s.Company.Name + " " + s.From + " to " + s.To,
		Author:   s.Store.Name,
		Creator:  "creditd",
		Producer: "creditd",
	})
	if err := pdf.AddTTFFontData("regular", goregular.TTF); err != nil {
		return err
	}
	if err := pdf.AddTTFFontData("bold", gobold.TTF); err != nil {
		return err
	}
	d := &doc{pdf: pdf, widths: map[fontSize]map[rune]float64{}}
	pages := paginate(body(s))
	for i, page := range pages {
		pdf.AddPage()
		if err := d.header(s); err != nil {
			return err
		}
		y := headerBottom
		for _, l := range page {
			if err := d.draw(l, y); err != nil {
				return err
			}
			y += l.height()
		}
		if err := d.text("regular", 8, margin, footerTop, contentW, fmt.Sprintf("Page %d of %d", i+1, len(pages)), gopdf.Right); err != nil {
			return err
		}
		if err := d.text("regular", 8, margin, footerTop, contentW, s.Company.Name+" - "+s.From+" to "+s.To, gopdf.Left); err != nil {
			return err
		}
	}
	_, err := pdf.WriteTo(w)
	return err
}

// doc is a document being drawn: the library's, and the width of each character drawn so far
// by font and size, which fit sums instead of asking the library to measure every cell (its
// measure, which converts the text and looks each character up in the font, was two thirds of
// a long statement's time).
type doc struct {
	pdf    *gopdf.GoPdf
	font   fontSize // the font set last
	widths map[fontSize]map[rune]float64
}

type fontSize struct {
	family string
	size   float64
}

// body is the statement's lines: the balances and totals, the entries, the aging and the open
// invoices.
func body(s credit.Statement) []line {
	loc := s.Store.Locale
	money := func(m credit.Money) string { return credit.FormatLocalAmount(m, loc) }
	label := func(text string, m credit.Money, bold bool) line {
		return line{kind: lineLabel, text: text, cells: []string{money(m) + " " + m.Currency}, bold: bold}
	}
	lines := []line{
		{kind: lineHeading, text: "Summary"},
		label("Opening balance at "+s.From+" 00:00 UTC", s.OpeningBalance, true),
		label("Invoiced", s.Totals.Invoiced, false),
		label("Paid", s.Totals.Paid, false),
		label("Credited (refunds, cancellations)", s.Totals.Credited, false),
		label("Adjusted (adjustments, opening balances)", s.Totals.Adjusted, false),
		label("Closing balance at "+s.To+" 24:00 UTC", s.ClosingBalance, true),
		{kind: lineGap},
		{kind: lineHeading, text: fmt.Sprintf("Entries (%d)", len(s.Entries))},
		{kind: lineTableHead, columns: entryColumns},
		{kind: lineRow, columns: entryColumns, cells: []string{s.From, "Opening balance", "", "", "", money(s.OpeningBalance)}, bold: true},
	}
	for _, e := range s.Entries {
		order := ""
		if e.PlatformOrderGID != nil {
			order = *e.PlatformOrderGID
		}
		note := ""
		if e.Note != nil {
			note = *e.Note
		}
		kind, ok := kindLabels[e.Kind]
		if !ok {
			kind = e.Kind
		}
		lines = append(lines, line{kind: lineRow, columns: entryColumns, cells: []string{
			e.OccurredAt.UTC().Format("2006-01-02 15:04"), kind, order, note, money(e.Amount), money(e.BalanceAfter)}})
	}
	lines = append(lines,
		line{kind: lineRow, columns: entryColumns, cells: []string{s.To, "Closing balance", "", "", "", money(s.ClosingBalance)}, bold: true},
		line{kind: lineGap},
		line{kind: lineHeading, text: "Aging at the end of " + s.To + " (" + s.Store.Currency + ")"},
		line{kind: lineTableHead, columns: agingColumns},
		line{kind: lineRow, columns: agingColumns, cells: []string{money(s.Aging.Current), money(s.Aging.Days1To30),
			money(s.Aging.Days31To60), money(s.Aging.Days61To90), money(s.Aging.Over90), money(s.Aging.Total)}},
		label("Open invoices (aging total)", s.Aging.Total, false),
		label("Not invoiced (opening balances, adjustments, unapplied payments and credits)", s.NotInvoiced, false),
		label("Closing balance", s.ClosingBalance, true),
		line{kind: lineGap},
		line{kind: lineHeading, text: fmt.Sprintf("Open invoices at the end of %s (%d)", s.To, len(s.OpenInvoices))},
		line{kind: lineTableHead, columns: invoiceColumns},
	)
	for _, inv := range s.OpenInvoices {
		lines = append(lines, line{kind: lineRow, columns: invoiceColumns, cells: []string{
			inv.PlatformOrderGID, inv.IssuedAt.UTC().Format(time.DateOnly), inv.DueAt.UTC().Format(time.DateOnly),
			strconv.Itoa(inv.DaysOverdue), money(inv.Amount), money(inv.OpenAmount)}})
	}
	if len(s.OpenInvoices) == 0 {
		lines = append(lines, line{kind: lineLabel, text: "None."})
	}
	return lines
}

// paginate splits lines into pages. A heading is not left alone at the bottom of a page, and a
// table continued on a new page repeats its heading row.
func paginate(lines []line) [][]line {
	const room = footerTop - 10 - headerBottom
	var pages [][]line
	var page []line
	used := 0.0
	var head *line // the heading row of the table being drawn
	for i, l := range lines {
		h := l.height()
		need := h
		if l.kind == lineHeading || l.kind == lineTableHead {
			need += 2 * rowH // with the next rows
		}
		if used+need > room && len(page) > 0 {
			pages = append(pages, page)
			page, used = nil, 0
			if l.kind == lineGap {
				continue
			}
			if l.kind == lineRow && head != nil {
				page, used = append(page, *head), head.height()
			}
		}
		switch l.kind {
		case lineTableHead:
			head = &lines[i]
		case lineHeading, lineLabel, lineGap:
			head = nil
		}
		page = append(page, l)
		used += h
	}
	return append(pages, page)
}

// header draws the page's header: the store, the title, the company and the period.
func (d *doc) header(s credit.Statement) error {
	gid := "-"
	if s.Company.PlatformCompanyGID != nil {
		gid = *s.Company.PlatformCompanyGID
	}
	for _, t := range []struct {
		font  string
		size  float64
		y     float64
		text  string
		align int
	}{
		{"bold", 11, margin, s.Store.Name, gopdf.Left},
		{"bold", 16, margin, "Statement of account", gopdf.Right},
		{"bold", 10, margin + 26, s.Company.Name, gopdf.Left},
		{"regular", bodySize, margin + 40, "Company " + s.Company.ID + " - platform GID " + gid, gopdf.Left},
		{"regular", bodySize, margin + 52, "Payment terms " + s.Company.PaymentTerms + " - amounts in " + s.Store.Currency, gopdf.Left},
		{"regular", 10, margin + 26, "Period " + s.From + " to " + s.To + " (UTC days)", gopdf.Right},
	} {
		if err := d.text(t.font, t.size, margin, t.y, contentW, t.text, t.align); err != nil {
			return err
		}
	}
	d.pdf.SetLineWidth(0.6)
	d.pdf.Line(margin, margin+70, pageW-margin, margin+70)
	return nil
}

// draw draws one line of the body at y.
func (d *doc) draw(l line, y float64) error {
	switch l.kind {
	case lineHeading:
		return d.text("bold", 10, margin, y+4, contentW, l.text, gopdf.Left)
	case lineGap:
		return nil
	case lineLabel:
		font := "regular"
		if l.bold {
			font = "bold"
		}
		if err := d.text(font, bodySize, margin, y, contentW-130, l.text, gopdf.Left); err != nil {
			return err
		}
		if len(l.cells) == 0 {
			return nil
		}
		return d.text(font, bodySize, pageW-margin-130, y, 130, l.cells[0], gopdf.Right)
	}
	font := "regular"
	if l.bold || l.kind == lineTableHead {
		font = "bold"
	}
	x := margin
	for i, c := range l.columns {
		cell := c.heading
		if l.kind == lineRow {
			cell = l.cells[i]
		}
		align := gopdf.Left
		if c.number {
			align = gopdf.Right
		}
		if err := d.text(font, bodySize, x, y, c.width-4, cell, align); err != nil {
			return err
		}
		x += c.width
	}
	if l.kind == lineTableHead {
		d.pdf.SetLineWidth(0.4)
		d.pdf.Line(margin, y+rowH-2.5, pageW-margin, y+rowH-2.5)
	}
	return nil
}

// text draws s in a box of width w at (x, y), aligned, cut with an ellipsis when it does not
// fit.
func (d *doc) text(font string, size, x, y, w float64, s string, align int) error {
	if s == "" {
		return nil
	}
	if f := (fontSize{font, size}); f != d.font {
		if err := d.pdf.SetFont(font, "", size); err != nil {
			return err
		}
		d.font = f
	}
	s, err := d.fit(s, w)
	if err != nil {
		return err
	}
	d.pdf.SetXY(x, y)
	return d.pdf.CellWithOption(&gopdf.Rect{W: w, H: rowH}, s, gopdf.CellOption{Align: align | gopdf.Top})
}

// width is the width of s in the current font, the sum of its characters' (the fonts are
// drawn without kerning).
func (d *doc) width(s string) (float64, error) {
	widths := d.widths[d.font]
	if widths == nil {
		widths = map[rune]float64{}
		d.widths[d.font] = widths
	}
	total := 0.0
	for _, r := range s {
		w, ok := widths[r]
		if !ok {
			var err error
			if w, err = d.pdf.MeasureTextWidth(string(r)); err != nil {
				return 0, err
			}
			widths[r] = w
		}
		total += w
	}
	return total, nil
}

// fit cuts s to width w, ending it with "..." when it had to be cut.
func (d *doc) fit(s string, w float64) (string, error) {
	width, err := d.width(s)
	if err != nil || width <= w {
		return s, err
	}
	dots, err := d.width("...")
	if err != nil {
		return "", err
	}
	// The longest start of s that leaves room for the dots, its widths added rune by rune
	// (the cache has them all: width(s) measured each).
	widths := d.widths[d.font]
	used, end := dots, 0
	for i, r := range s {
		if used+widths[r] > w {
			break
		}
		used += widths[r]
		end = i + utf8.RuneLen(r)
	}
	return strings.TrimSpace(s[:end]) + "...", nil
}
