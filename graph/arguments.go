package graph

import (
	"context"
	"errors"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/graph/scalar"
	"github.com/creditd/creditd/httpapi"
)

// Connection arguments are checked before execution (contract §14): a page size outside 1 to
// 250, a cursor this store did not issue for that list, a search of the wrong length, an afterEntry or afterEvent that is no
// entry's or event's ID, an unknown event type or a malformed DateTime refuse the whole request
// with 400 and no data, as the other limits do, instead of nulling one field and, through its
// non-null type, every sibling. The values are read after variables are coerced, so an argument
// passed as a variable is checked like a literal. What only reading data can tell (an afterEntry
// of another company's ledger, a cursor of the same list with other filters) is still a field
// error during execution.

// listKinds names the domain list each connection field pages through, for the cursor check.
// A connection not named here has its cursor checked against all of the store's lists.
var listKinds = map[string]string{
	"companies":    "companies",
	"applications": "applications",
	"events":       "events",
	"ledger":       "ledger",
	"timeline":     "timeline",
	"invoices":     "invoices",
}

// argumentChecks is the extension that checks every connection field's arguments.
type argumentChecks struct{ svc Services }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = argumentChecks{}

func (argumentChecks) ExtensionName() string                   { return "ArgumentChecks" }
func (argumentChecks) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext walks the operation's selections, each fragment once, and refuses the
// request at the first connection argument a list would refuse.
func (a argumentChecks) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	c := argumentChecker{ctx: ctx, svc: a.svc, oc: oc, seen: map[string]bool{}}
	return c.selectionSet(oc.Operation.SelectionSet)
}

type argumentChecker struct {
	ctx  context.Context
	svc  Services
	oc   *graphql.OperationContext
	seen map[string]bool
}

func (c *argumentChecker) selectionSet(set ast.SelectionSet) *gqlerror.Error {
	for _, sel := range set {
		var err *gqlerror.Error
		switch sel := sel.(type) {
		case *ast.Field:
			if err = c.field(sel); err == nil {
				err = c.selectionSet(sel.SelectionSet)
			}
		case *ast.InlineFragment:
			err = c.selectionSet(sel.SelectionSet)
		case *ast.FragmentSpread:
			if !c.seen[sel.Name] {
				c.seen[sel.Name] = true
				if def := c.oc.Doc.Fragments.ForName(sel.Name); def != nil {
					err = c.selectionSet(def.SelectionSet)
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// field checks the arguments of a connection field: paging (first, after), the ledger's and the
// feed's positions (afterEntry, afterEvent), the feed's types, and every DateTime.
func (c *argumentChecker) field(f *ast.Field) *gqlerror.Error {
	def := f.Definition
	if def == nil || len(def.Arguments) == 0 || !strings.HasSuffix(def.Type.Name(), "Connection") {
		return nil
	}
	args := f.ArgumentMap(c.oc.Variables)
	var p credit.ListParams
	if v := args["first"]; v != nil {
		n, err := graphql.UnmarshalInt(v)
		if err != nil {
			return nil // validation has checked the type already
		}
		p.Limit = &n
	}
	p.Cursor, _ = args["after"].(string)
	err := c.svc.Lists.CheckListParams(c.ctx, listKinds[f.Name], p)
	if err == nil {
		after, _ := args["afterEntry"].(string)
		err = credit.CheckLedgerAfter(after)
	}
	if err == nil {
		after, _ := args["afterEvent"].(string)
		types, _ := args["types"].([]any)
		ep := credit.EventListParams{After: after}
		for _, t := range types {
			if s, ok := t.(string); ok {
				ep.Types = append(ep.Types, s)
			}
		}
		err = c.svc.Events.CheckListParams(ep)
	}
	if search, ok := args["search"].(string); ok && err == nil {
		err = credit.CheckCompanySearch(&search)
	}
	for _, arg := range def.Arguments {
		if err == nil && arg.Type.Name() == "DateTime" && args[arg.Name] != nil {
			_, err = scalar.UnmarshalDateTime(c.ctx, args[arg.Name])
			err = named(err, arg.Name)
		}
	}
	if err == nil {
		return nil
	}
	return argumentRefusal(f, err)
}

// graphQLArgument is the argument of a connection field that the domain's param names.
func graphQLArgument(field, param string) string {
	switch param {
	case "limit":
		return "first"
	case "cursor":
		return "after"
	case "type":
		return "types"
	case "order":
		return "orderBy"
	case "q":
		return "search"
	case "after":
		if field == "events" {
			return "afterEvent"
		}
		return "afterEntry"
	}
	return param
}

// argumentError is a connection argument refused before execution, its param and message
// already under the argument's GraphQL name.
type argumentError struct{ err *credit.Error }

func (e argumentError) Error() string { return e.err.Error() }
func (e argumentError) Unwrap() error { return e.err }

// named is err with its param set to name (an argument whose domain check does not know it).
func named(err error, name string) error {
	var ce *credit.Error
	if !errors.As(err, &ce) {
		return err
	}
	p := renameParam(httpapi.Problem{Code: ce.Code, Message: ce.Message, Param: ce.Param}, name)
	return &credit.Error{Code: p.Code, Message: p.Message, Param: p.Param}
}

// argumentRefusal is the error that refuses the request for f's argument: the domain's
// invalid_parameter under the argument's GraphQL name, at the argument's place in the query,
// marked as a validation failure so that the transport answers it like one (400, no data). An
// error that is not the caller's (the store could not be read) is answered as it is.
func argumentRefusal(f *ast.Field, err error) *gqlerror.Error {
	var ce *credit.Error
	if !errors.As(err, &ce) {
		return &gqlerror.Error{Message: err.Error(), Err: err}
	}
	name := graphQLArgument(f.Name, ce.Param)
	p := renameParam(httpapi.Problem{Code: ce.Code, Message: ce.Message, Param: ce.Param}, name)
	e := &gqlerror.Error{Message: p.Message, Err: argumentError{&credit.Error{Code: p.Code, Message: p.Message, Param: p.Param}}}
	if arg := f.Arguments.ForName(name); arg != nil && arg.Position != nil {
		e.Locations = []gqlerror.Location{{Line: arg.Position.Line, Column: arg.Position.Column}}
	} else if f.Position != nil {
		e.Locations = []gqlerror.Location{{Line: f.Position.Line, Column: f.Position.Column}}
	}
	errcode.Set(e, errcode.ValidationFailed)
	return e
}
