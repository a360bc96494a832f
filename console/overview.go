package console

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
)

// The overview (/): a credit manager's morning questions on one page, each figure the domain's
// (credit.Overview, the receivables, the webhook endpoints), and two charts drawn on the server
// as inline SVG, readable without JavaScript and with nothing loaded from elsewhere.

// overviewBody is the overview page.
type overviewBody struct {
	Overview credit.Overview
	Totals   credit.Receivables
	// DSO is the store's days sales outstanding (contract §17).
	DSO decimal.Decimal
	// Overdue are the companies with overdue invoices, the largest overdue amount first.
	Overdue []credit.CompanyReceivables
	// FailingEndpoints are webhook endpoints whose deliveries fail or that were disabled.
	FailingEndpoints []credit.WebhookEndpoint
	AgingChart       barChart
	HistoryChart     lineChart
	Currency         string
}

// overviewLimit is how many companies each list shows.
const overviewLimit = 8

func (c *Console) overview(w http.ResponseWriter, r *http.Request, v *visit) {
	ov, err := c.svc.Reports.Overview(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	totals, err := c.svc.Reports.Receivables(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	dso, err := c.svc.Reports.StoreDSO(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	overdue, err := c.svc.Reports.ReceivablesByCompany(v.ctx, true)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	sortRows(overdue, receivablesColumns[6], func(l credit.CompanyReceivables) string { return l.CompanyName }, true)
	endpoints, err := c.svc.Webhooks.ListEndpoints(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	body := overviewBody{Overview: ov, Totals: totals, DSO: dso, Overdue: overdue[:min(len(overdue), overviewLimit)], Currency: totals.Outstanding.Currency}
	for _, e := range endpoints {
		if e.FailingSince != nil || e.DisabledReason != nil {
			body.FailingEndpoints = append(body.FailingEndpoints, e)
		}
	}
	a := totals.Aging
	body.AgingChart = newBarChart([]string{"Current", "1–30", "31–60", "61–90", "> 90"},
		[]credit.Money{a.Current, a.Days1To30, a.Days31To60, a.Days61To90, a.Over90})
	body.HistoryChart = newLineChart(ov.History, body.Currency)
	p := pageFor(v, "Overview", "overview")
	p.Notice = c.takeNotice(r, v)
	p.Body = body
	c.render(w, r, http.StatusOK, "overview.html", p)
}

// chart geometry, in SVG user units.
const (
	chartWidth, chartHeight = 560, 200
	chartLeft, chartBottom  = 8, 28
)

// bar is one bar of a bar chart.
type bar struct {
	X, Y, Width, Height float64
	Label, Value        string
	LabelX              float64
	Past                bool
}

// barChart is an SVG bar chart of amounts.
type barChart struct {
	Width, Height, Base float64
	Bars                []bar
	Summary             string
}

func newBarChart(labels []string, values []credit.Money) barChart {
	ch := barChart{Width: chartWidth, Height: chartHeight, Base: chartHeight - chartBottom}
	maxV := decimal.Zero
	for _, v := range values {
		maxV = decimal.Max(maxV, decimal.RequireFromString(v.Amount))
	}
	slot := float64(chartWidth-2*chartLeft) / float64(len(values))
	var parts []string
	for i, v := range values {
		d := decimal.RequireFromString(v.Amount)
		h := 0.0
		if maxV.IsPositive() && d.IsPositive() {
			h, _ = d.Div(maxV).Mul(decimal.NewFromFloat(ch.Base - 24)).Float64()
		}
		x := chartLeft + float64(i)*slot + slot*0.15
		ch.Bars = append(ch.Bars, bar{X: x, Y: ch.Base - h, Width: slot * 0.7, Height: h, Label: labels[i],
			Value: formatAmount(v), LabelX: x + slot*0.35, Past: i > 0})
		parts = append(parts, labels[i]+": "+formatMoney(v))
	}
	ch.Summary = strings.Join(parts, "; ")
	return ch
}

// lineChart is an SVG line of the store's outstanding by day.
type lineChart struct {
	Width, Height, Base float64
	Points              string
	Area                string
	First, Last         string
	High, Low           string
	Summary             string
	Ticks               []tick
	// Scale is the y-axis: a gridline and its amount at the lowest, middle and highest values
	// drawn, so the line can be read as figures, not only as a shape.
	Scale []gridline
}

// gridline is one horizontal line of a chart's y-axis with its amount.
type gridline struct {
	Y     float64
	Label string
}

type tick struct {
	X      float64
	Label  string
	Anchor string
}

func newLineChart(days []credit.DayBalance, currency string) lineChart {
	ch := lineChart{Width: chartWidth, Height: chartHeight, Base: chartHeight - chartBottom}
	if len(days) == 0 {
		return ch
	}
	lo, hi := days[0].Outstanding, days[0].Outstanding
	for _, d := range days {
		lo, hi = decimal.Min(lo, d.Outstanding), decimal.Max(hi, d.Outstanding)
	}
	lo = decimal.Min(lo, decimal.Zero)
	span := hi.Sub(lo)
	step := float64(chartWidth-2*chartLeft) / float64(max(len(days)-1, 1))
	yOf := func(v decimal.Decimal) float64 {
		if !span.IsPositive() {
			return ch.Base
		}
		f, _ := v.Sub(lo).Div(span).Float64()
		return ch.Base - f*(ch.Base-16)
	}
	money := func(d decimal.Decimal) string { return formatMoney(credit.NewMoney(d, currency)) }
	ch.Scale = []gridline{{Y: yOf(lo), Label: money(lo)}}
	if span.IsPositive() {
		mid := lo.Add(span.Div(decimal.NewFromInt(2))).Round(0)
		ch.Scale = append(ch.Scale, gridline{Y: yOf(mid), Label: money(mid)}, gridline{Y: yOf(hi), Label: money(hi)})
	}
	var pts []string
	for i, d := range days {
		y := yOf(d.Outstanding)
		x := chartLeft + float64(i)*step
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		if i%30 == (len(days)-1)%30 {
			anchor := "middle"
			if i == len(days)-1 {
				anchor = "end" // today's label stays inside the chart
			}
			ch.Ticks = append(ch.Ticks, tick{X: x, Label: d.Day.Format("2 Jan"), Anchor: anchor})
		}
	}
	ch.Points = strings.Join(pts, " ")
	ch.Area = fmt.Sprintf("%d,%.1f %s %.1f,%.1f", chartLeft, ch.Base, ch.Points, chartLeft+float64(len(days)-1)*step, ch.Base)
	ch.First, ch.Last = money(days[0].Outstanding), money(days[len(days)-1].Outstanding)
	ch.High, ch.Low = money(hi), money(lo)
	ch.Summary = fmt.Sprintf("Outstanding %s on %s, %s today; highest %s.", ch.First, days[0].Day.Format("2 Jan 2006"), ch.Last, ch.High)
	return ch
}
