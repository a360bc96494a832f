// Command rewrite rewrites gqlgen's generated executor (graph/generated.go) where gqlgen has no
// option for what creditd needs. It runs after gqlgen from `go generate` (generate.go). Each
// rewrite fails when the generated code no longer has the shape it expects, so that a gqlgen
// upgrade cannot silently undo it.
//
// Rewrites 1 to 5 are performance code, each kept because it was measured (BENCHMARKS.md: issue
// 13, commit 013f6f3, and issue 23, "GraphQL executor"); 6 is a correctness fix.
//
//  1. Sequential lists. gqlgen starts a goroutine per item of every list of objects; for a
//     dashboard of 50 companies with 5 ledger entries each that was 300 goroutines a request,
//     their stacks growing as the fields below them ran. creditd's resolvers never wait for a
//     sibling (the batch loads in graph/batch.go run in whichever resolver asks first, without
//     timers), so the items are marshalled one after another on the request's goroutine, which
//     changes no result.
//  2. Plain leaves. A field whose resolver only reads a struct field (`return obj.X, nil`) and
//     whose value cannot fail to marshal is marshalled directly, without graphql.ResolveField:
//     no FieldContext, context value, closures or recover a field. Nothing in such a field can
//     fail or panic, so none of those can change its answer; the one thing ResolveField would
//     also run is field middleware, which creditd's handler has none of
//     (graph.TestNoFieldMiddleware keeps it so). A value cannot fail when its scalar's marshal
//     function is one of cannotFail (graph/scalar's tests hold that claim for its own), or when
//     it is an object whose every field is plain (Money, Hold, Aging...).
//  3. Plain scalars. A context scalar's value (Decimal, DateTime) is handed to
//     scalar.Plain, which returns it as it is when it is a plain graphql.Marshaler, instead of
//     wrapping it with the request's context in graphql.WrapContextMarshaler.
//  4. Remembered fields. Objects collect their selected fields with graph.collectFields,
//     which remembers them per selection set of gqlgen's cached document (graph/collect.go).
//  5. Response buffers. A query's response is written into a buffer sized by the same
//     operation's last response (graph/collect.go's responseBuffer), a hint only.
//  6. Deferred fields left out. gqlgen writes a deferred field as null in the object's first
//     answer, which a client reads as the value of a field that may not be null (Apollo
//     Client's ledger: null); the incremental delivery format leaves it out until its part
//     comes. A deferred field's place holds deferredField instead of null, and an object with
//     deferred fields answers without them (graph/incremental.go's withoutDeferred).
package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

func main() {
	if err := run("graph/generated.go"); err != nil {
		fmt.Fprintln(os.Stderr, "rewrite:", err)
		os.Exit(1)
	}
}

// marker heads a rewritten file, so that running the rewrite again changes nothing.
const marker = "// Rewritten by graph/internal/rewrite after gqlgen: see its doc.\n"

func run(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if bytes.Contains(src, []byte(marker)) {
		return nil // already rewritten
	}
	out, err := rewrite(string(src))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

// rewrite applies every rewrite to gqlgen's output src.
func rewrite(src string) (string, error) {
	for _, r := range []struct {
		name string
		f    func(string) (string, error)
	}{
		{"sequential lists", sequential},
		{"plain scalars", plainScalars},
		{"plain leaves", plainLeaves},
		{"remembered fields", rememberedFields},
		{"response buffers", responseBuffers},
		{"deferred fields left out", deferredLeftOut},
	} {
		var err error
		if src, err = r.f(src); err != nil {
			return "", fmt.Errorf("%s: %w: did gqlgen's output change?", r.name, err)
		}
	}
	i := strings.Index(src, "\npackage ")
	if i < 0 {
		return "", fmt.Errorf("no package clause")
	}
	return src[:i+1] + marker + src[i+1:], nil
}

// replaceAll replaces every old in src by new, failing when there is none.
func replaceAll(src, old, new string) (string, error) {
	if !strings.Contains(src, old) {
		return "", fmt.Errorf("no %q to rewrite", strings.TrimSpace(old))
	}
	return strings.ReplaceAll(src, old, new), nil
}

func sequential(src string) (string, error) {
	return replaceAll(src, "\t\t\tgo f(i)\n", "\t\t\tf(i) // rewrite: sequential list, see graph/internal/rewrite\n")
}

func plainScalars(src string) (string, error) {
	return replaceAll(src, "\treturn graphql.WrapContextMarshaler(ctx, res)\n", "\treturn scalar.Plain(ctx, res)\n")
}

func rememberedFields(src string) (string, error) {
	return replaceAll(src, " := graphql.CollectFields(ec.OperationContext, sel, ", " := collectFields(ec.OperationContext, sel, ")
}

func responseBuffers(src string) (string, error) {
	const old = "\t\t\tvar buf bytes.Buffer\n\t\t\tdata.MarshalGQL(&buf)\n\t\t\tresponse.Data = buf.Bytes()\n"
	const new = "\t\t\tbuf := responseBuffer(opCtx)\n\t\t\tdata.MarshalGQL(buf)\n\t\t\tresponse.Data = buf.Bytes()\n\t\t\tresponseWritten(opCtx, len(response.Data))\n"
	if n := strings.Count(src, old); n != 1 {
		return "", fmt.Errorf("%d query response buffers, want 1", n)
	}
	return strings.Replace(src, old, new, 1), nil
}

func deferredLeftOut(src string) (string, error) {
	const old = `			Context:  ctx,
		})
	}

	return out
}
`
	const new = `			Context:  ctx,
		})
	}

	if len(deferred) > 0 {
		return withoutDeferred(out, fields) // rewrite: deferred fields left out, see graph/internal/rewrite
	}
	return out
}
`
	const placeholder = "\t\t\t\t// don't run the out.Concurrently() call below\n\t\t\t\tout.Values[i] = graphql.Null\n"
	src, err := replaceAll(src, placeholder, "\t\t\t\t// don't run the out.Concurrently() call below\n\t\t\t\tout.Values[i] = deferredField // rewrite: deferred fields left out, see graph/internal/rewrite\n")
	if err != nil {
		return "", err
	}
	return replaceAll(src, old, new)
}

// cannotFail are the scalar marshal functions that return a value for any input, never
// graphql.Null, and whose value writes itself without an error. gqlgen's hold it by their code
// (they write any string, number or bool); graph/scalar's are held by its tests
// (TestMarshalCannotFail).
var cannotFail = map[string]bool{
	"graphql.MarshalID":      true,
	"graphql.MarshalString":  true,
	"graphql.MarshalInt":     true,
	"graphql.MarshalBoolean": true,
	"scalar.MarshalDecimal":  true,
	"scalar.MarshalDateTime": true,
	"scalar.MarshalEnum":     true,
}

// mustBePlain are fields the dashboard reads that must come out plain: when one does not, the
// shape of gqlgen's output has changed under this rewrite.
var mustBePlain = []string{
	"_Money_amount", "_Money_currency", "_Company_id", "_Company_name", "_Company_status",
	"_Company_paymentTerms", "_Company_creditLimit", "_Company_hold", "_Company_updatedAt",
	"_Hold_kind", "_Hold_note", "_Hold_placedAt", "_LedgerEntry_amount", "_LedgerEntry_note",
	"_LedgerEntry_occurredAt",
}

var (
	// fieldFunc is a field's function as gqlgen writes it for a field read from a struct.
	fieldFunc = regexp.MustCompile(`(?m)^func \(ec \*executionContext\) (_[^\s(]+)\(ctx context\.Context, field graphql\.CollectedField, obj \*[^\s)]+\) \(ret graphql\.Marshaler\) \{
	return graphql\.ResolveField\(
		ctx,
		ec\.OperationContext,
		field,
		ec\.fieldContext[^\s,]+,
		func\(ctx context\.Context\) \(any, error\) \{
			return (obj\.[A-Za-z0-9_]+), nil
		\},
		nil,
		ec\.(marshal[^\s,]+),
		true,
		(?:true|false),
	\)
\}
`)
	// objectFunc is the start of an object's function; its body ends at the first "\n}\n".
	objectFunc = regexp.MustCompile(`(?m)^func \(ec \*executionContext\) (_[^\s(_][^\s(]*)\(ctx context\.Context, sel ast\.SelectionSet, obj \*[^\s)]+\) graphql\.Marshaler \{\n`)
	fieldCall  = regexp.MustCompile(`ec\.(_[^\s(]+)\(ctx, field, obj\)`)
	// marshalFunc is the start of a marshal function; its body ends at the first "\n}\n".
	marshalFunc = regexp.MustCompile(`(?m)^func \(ec \*executionContext\) (marshal[^\s(]+)\(ctx context\.Context, sel ast\.SelectionSet, v [^\s)]+\) graphql\.Marshaler \{\n`)
	// Bodies of the marshal functions of a scalar, non-null and nullable (of a named string type
	// too, such as credit.EventType, cast to string), and of an object.
	scalarN = regexp.MustCompile(`^\t_ = sel
	res := ([A-Za-z.]+)\((?:v|string\(v\))\)
	if res == graphql\.Null \{
		if !graphql\.HasFieldError\(ctx, graphql\.GetFieldContext\(ctx\)\) \{
			ec\.Errorf\(ctx, "the requested element is null which the schema does not allow"\)
		\}
	\}
	return (?:res|scalar\.Plain\(ctx, res\))
$`)
	scalarO = regexp.MustCompile(`^\tif v == nil \{
		return graphql\.Null
	\}
	_ = sel
(?:	_ = ctx
)?	res := ([A-Za-z.]+)\((?:\*v|string\(\*v\))\)
	return (?:res|scalar\.Plain\(ctx, res\))
$`)
	objectN = regexp.MustCompile(`^\treturn ec\.(_[^\s(]+)\(ctx, sel, &v\)\n$`)
	objectO = regexp.MustCompile(`^\tif v == nil \{
		return graphql\.Null
	\}
	return ec\.(_[^\s(]+)\(ctx, sel, v\)
$`)
)

// bodies maps the name of each function that re matches to its body.
func bodies(src string, re *regexp.Regexp) map[string]string {
	m := map[string]string{}
	for _, loc := range re.FindAllStringSubmatchIndex(src, -1) {
		body := src[loc[1]:]
		end := strings.Index(body, "\n}\n")
		if end < 0 {
			continue
		}
		m[src[loc[2]:loc[3]]] = body[:end+1]
	}
	return m
}

func plainLeaves(src string) (string, error) {
	// Scalars and objects whose values cannot fail to marshal.
	marshals := bodies(src, marshalFunc)
	objects := bodies(src, objectFunc)
	plainMarshal := map[string]bool{}
	objectOf := map[string]string{} // object marshal function -> object function
	for name, body := range marshals {
		if m := scalarN.FindStringSubmatch(body); m != nil && cannotFail[m[1]] {
			plainMarshal[name] = true
		} else if m := scalarO.FindStringSubmatch(body); m != nil && cannotFail[m[1]] {
			plainMarshal[name] = true
		} else if m := objectN.FindStringSubmatch(body); m != nil {
			objectOf[name] = m[1]
		} else if m := objectO.FindStringSubmatch(body); m != nil {
			objectOf[name] = m[1]
		}
	}
	if len(plainMarshal) == 0 {
		return "", fmt.Errorf("no scalar marshal function of the shape expected")
	}
	// Fields read from a struct, by function name.
	type field struct {
		start, end    int
		read, marshal string
	}
	fields := map[string]field{}
	for _, loc := range fieldFunc.FindAllStringSubmatchIndex(src, -1) {
		fields[src[loc[2]:loc[3]]] = field{loc[0], loc[1], src[loc[4]:loc[5]], src[loc[6]:loc[7]]}
	}
	// An object is plain when every field it marshals is plain and it runs no resolver of its
	// own; a field is plain when it reads a struct field and its marshal function is plain.
	plainObject := map[string]bool{}
	plainField := func(name string) bool {
		f, ok := fields[name]
		if !ok {
			return false
		}
		if obj, ok := objectOf[f.marshal]; ok {
			return plainObject[obj]
		}
		return plainMarshal[f.marshal]
	}
	for changed := true; changed; {
		changed = false
		for obj, body := range objects {
			if plainObject[obj] || strings.Contains(body, "innerFunc") || strings.Contains(body, "WithFieldContext") {
				continue
			}
			calls := fieldCall.FindAllStringSubmatch(body, -1)
			if len(calls) == 0 || strings.Count(body, "\t\tcase \"") != len(calls)+1 { // +1: __typename
				continue
			}
			all := true
			for _, c := range calls {
				all = all && plainField(c[1])
			}
			if all {
				plainObject[obj], changed = true, true
			}
		}
	}
	var plain []string
	for name := range fields {
		if plainField(name) {
			plain = append(plain, name)
		}
	}
	for _, name := range mustBePlain {
		if !plainField(name) {
			return "", fmt.Errorf("field function %s is not plain", name)
		}
	}
	// Rewrite from the end, so that earlier offsets stay valid.
	sort.Slice(plain, func(i, j int) bool { return fields[plain[i]].start > fields[plain[j]].start })
	for _, name := range plain {
		f := fields[name]
		fn := src[f.start:f.end]
		head := fn[:strings.Index(fn, "\n")+1]
		body := fmt.Sprintf("\treturn ec.%s(ctx, field.Selections, %s) // rewrite: plain leaf, see graph/internal/rewrite\n}\n", f.marshal, f.read)
		src = src[:f.start] + head + body + src[f.end:]
	}
	return src, nil
}
