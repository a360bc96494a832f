package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/creditd/creditd/credittest/gosource"
)

// TestGoIdentifiersResolve resolves every Go identifier that the prose of README.md,
// CHANGELOG.md, RELIABILITY.md, BENCHMARKS.md and docs/*.md cites in backticks against the
// module's code, so a rename or a removal cannot leave a stale reference behind.
//
// What counts as a Go identifier. Inside an inline code span (fenced blocks are examples, run
// by other tests), a dotted name of two or three Go identifiers, not part of a path or a longer
// dotted name, whose first part is:
//   - the name of a package of this module (`credit`, `credittest`, `rewrite`, …) and whose
//     second part starts with an upper-case letter (what another package can name): `pkg.Name`
//     must be a top-level declaration of that package, and `pkg.Type.Member` a method or field
//     of that type (promoted ones included);
//   - or an exported type declared in the module, with a second part that starts with an
//     upper-case letter and is not all capitals: `Type.Member` must be a method or field of a
//     type of that name in some package of the module;
//   - or an unexported type declared in the module whose name is in camel case (`groupCommit`;
//     a one-word lower-case name such as `hold` is more often a JSON member): `type.member`,
//     whatever the member's case, must be a method or field of it.
//
// And a test, fuzz target or benchmark named alone (`TestConditionalGet`, `FuzzParseAmount`,
// `BenchmarkCreateAdjustment`, also inside a command such as `go test -run TestX ./console/`,
// where it is written in full, not as a prefix; a placeholder such as `<FuzzName>` is not
// one): a Test, Fuzz or Benchmark function of that name must be declared in a _test.go file.
//
// Everything else is left alone: JSON members and event types (`company.created`,
// `data.object`: lower case after the dot), GraphQL fields (`Event.company`) and enum values
// (`CompanyStatus.ON_HOLD`), file names (`credit/storage.go`, `schema.graphqls`), flags,
// hosts and other modules' packages (`errgroup.Group`: no package of this module has that
// name). A name of this module's package shared with another module's (`client`, `schema`) is
// read as this module's.
func TestGoIdentifiersResolve(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	idx := indexModule(t, root)

	files := []string{"README.md", "CHANGELOG.md", "RELIABILITY.md", "BENCHMARKS.md"}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, rel)
	}
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range testReferences(string(raw)) {
			checked++
			if !idx.tests[ref.name] {
				t.Errorf("%s:%d: `%s` names no test function of this module (renamed or removed?)", f, ref.line, ref.name)
			}
		}
		for _, ref := range goReferences(string(raw)) {
			ok, considered := idx.resolve(ref.name)
			if !considered {
				continue
			}
			checked++
			if !ok {
				t.Errorf("%s:%d: `%s` names no declaration of this module (renamed or removed?)", f, ref.line, ref.name)
			}
		}
	}
	t.Logf("%d references checked", checked)
	if checked < 20 {
		t.Errorf("only %d references were checked: the extraction is broken", checked)
	}
}

type goReference struct {
	name string
	line int
}

var (
	fence    = regexp.MustCompile("(?m)^\\s*```")
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// A dotted name of two or three identifiers; the caller checks what surrounds it.
	dotted = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){1,2}`)
)

var testName = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.<])((?:Test|Fuzz|Benchmark)[A-Z0-9_][A-Za-z0-9_]*)`)

// testReferences returns the names of test functions in the inline code spans of a Markdown
// text, outside fenced blocks.
func testReferences(md string) []goReference {
	var refs []goReference
	for _, span := range inlineCode(md) {
		for _, m := range testName.FindAllStringSubmatch(span.text, -1) {
			refs = append(refs, goReference{name: m[1], line: span.line})
		}
	}
	return refs
}

// codeText is the text of one inline code span and the line it is on.
type codeText struct {
	text string
	line int
}

// inlineCode returns the inline code spans of a Markdown text outside its fenced blocks, in
// order, with their lines: where a doc names code in its prose.
func inlineCode(md string) []codeText {
	var spans []codeText
	inFence := false
	for i, line := range strings.Split(md, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, span := range codeSpan.FindAllStringSubmatch(line, -1) {
			spans = append(spans, codeText{text: span[1], line: i + 1})
		}
	}
	return spans
}

// goReferences returns the dotted names in the inline code spans of a Markdown text, outside
// fenced blocks, with their lines. A name that continues a path or a longer dotted name
// (`credit/storage.go`, `a.b.c.d`, `creditd.db-locks`) is not one.
func goReferences(md string) []goReference {
	var refs []goReference
	for _, span := range inlineCode(md) {
		s := span.text
		for _, m := range dotted.FindAllStringIndex(s, -1) {
			if m[0] > 0 && strings.ContainsRune("./-:@*", rune(s[m[0]-1])) && !(s[m[0]-1] == '*' && m[0] == 1) {
				continue // part of a path, a URL or a longer name (a leading * is a pointer)
			}
			if m[1] < len(s) && strings.ContainsRune("./-:@", rune(s[m[1]])) {
				continue
			}
			refs = append(refs, goReference{name: s[m[0]:m[1]], line: span.line})
		}
	}
	return refs
}

// goType is what the index knows of a declared type: its methods and fields, and the types it
// embeds (whose members it promotes), as written ("storeCache", "credit.Storage").
type goType struct {
	members  map[string]bool
	embedded []string
}

// goPackage is one package's top-level declarations and types.
type goPackage struct {
	decls map[string]bool
	types map[string]*goType
}

// moduleIndex holds the module's packages by package name (several directories may share one).
type moduleIndex struct {
	packages map[string][]*goPackage
	tests    map[string]bool // Test, Fuzz and Benchmark functions of _test.go files
}

// indexModule parses every Go file of the module (not its testdata or node_modules): the
// declarations of the non-test files, the test functions of the _test.go files.
func indexModule(t *testing.T, root string) *moduleIndex {
	t.Helper()
	byDir := map[string]*goPackage{}
	idx := &moduleIndex{packages: map[string][]*goPackage{}, tests: map[string]bool{}}
	fset := token.NewFileSet()
	for _, path := range gosource.Files(t, root) {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(path, "_test.go") {
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && testName.MatchString(fn.Name.Name) {
					idx.tests[fn.Name.Name] = true
				}
			}
			continue
		}
		dir := filepath.Dir(path)
		p := byDir[dir]
		if p == nil {
			p = &goPackage{decls: map[string]bool{}, types: map[string]*goType{}}
			byDir[dir] = p
			idx.packages[f.Name.Name] = append(idx.packages[f.Name.Name], p)
		}
		p.add(f)
	}
	return idx
}

func (p *goPackage) typ(name string) *goType {
	if p.types[name] == nil {
		p.types[name] = &goType{members: map[string]bool{}}
	}
	return p.types[name]
}

func (p *goPackage) add(f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				p.decls[d.Name.Name] = true
				continue
			}
			p.typ(typeName(d.Recv.List[0].Type)).members[d.Name.Name] = true
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.decls[n.Name] = true
					}
				case *ast.TypeSpec:
					p.decls[s.Name.Name] = true
					if s.Assign.IsValid() {
						// An alias has no members of its own (openapi/client's Decimal is a
						// string), so `Decimal.Value` is another module's type.
						continue
					}
					gt := p.typ(s.Name.Name)
					switch tt := s.Type.(type) {
					case *ast.StructType:
						for _, field := range tt.Fields.List {
							if len(field.Names) == 0 {
								gt.embedded = append(gt.embedded, typeName(field.Type))
								gt.members[lastPart(typeName(field.Type))] = true
							}
							for _, n := range field.Names {
								gt.members[n.Name] = true
							}
						}
					case *ast.InterfaceType:
						for _, m := range tt.Methods.List {
							if len(m.Names) == 0 {
								gt.embedded = append(gt.embedded, typeName(m.Type))
							}
							for _, n := range m.Names {
								gt.members[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
}

// typeName is a type expression's name without pointers and type arguments: "storeCache",
// "credit.Storage".
func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	case *ast.SelectorExpr:
		return typeName(t.X) + "." + t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}

func lastPart(name string) string {
	return name[strings.LastIndex(name, ".")+1:]
}

// hasMember reports whether the type name of package p has the member, declared or promoted
// through the types it embeds (looked up in p, or in the module's package it names).
func (idx *moduleIndex) hasMember(p *goPackage, name, member string, depth int) bool {
	gt := p.types[name]
	if gt == nil || depth > 5 {
		return false
	}
	if gt.members[member] {
		return true
	}
	for _, e := range gt.embedded {
		if pkg, typ, ok := strings.Cut(e, "."); ok {
			for _, q := range idx.packages[pkg] {
				if idx.hasMember(q, typ, member, depth+1) {
					return true
				}
			}
		} else if idx.hasMember(p, e, member, depth+1) {
			return true
		}
	}
	return false
}

// resolve says whether name is a Go reference by the rule of TestGoIdentifiersResolve
// (considered) and whether it names a declaration of the module (ok).
func (idx *moduleIndex) resolve(name string) (ok, considered bool) {
	parts := strings.Split(name, ".")
	if len(parts) == 2 && !startsUpper(parts[0]) && strings.ToLower(parts[0]) != parts[0] {
		return idx.member(parts[0], parts[1])
	}
	if !startsUpper(parts[1]) {
		return false, false
	}
	if pkgs := idx.packages[parts[0]]; len(pkgs) > 0 {
		for _, p := range pkgs {
			switch {
			case len(parts) == 2 && p.decls[parts[1]]:
				return true, true
			case len(parts) == 3 && p.types[parts[1]] != nil && idx.hasMember(p, parts[1], parts[2], 0):
				return true, true
			}
		}
		return false, true
	}
	if len(parts) != 2 || !startsUpper(parts[0]) || strings.ToUpper(parts[1]) == parts[1] {
		return false, false
	}
	return idx.member(parts[0], parts[1])
}

// member resolves Type.Member against every type of that name declared in the module
// (considered only when there is one).
func (idx *moduleIndex) member(typ, member string) (ok, considered bool) {
	declared := false
	for _, pkgs := range idx.packages {
		for _, p := range pkgs {
			if p.types[typ] == nil || !p.decls[typ] {
				continue
			}
			declared = true
			if idx.hasMember(p, typ, member, 0) {
				return true, true
			}
		}
	}
	return false, declared
}

func startsUpper(s string) bool {
	return s != "" && unicode.IsUpper(rune(s[0]))
}

// TestCodeLayoutListsEveryPackage: the README's "Code layout" names every package directory of
// the module in backticks (`credit/`, `graph/internal/rewrite`), so a newcomer finds each one
// there. The packages ent generates under ent/ are covered by `ent/`; the root package holds
// only generate.go's go:generate lines.
func TestCodeLayoutListsEveryPackage(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(raw), "\n## Code layout\n")
	if !ok {
		t.Fatal(`README.md has no "## Code layout" section`)
	}
	if end := strings.Index(layout, "\n## "); end >= 0 {
		layout = layout[:end]
	}
	listed := map[string]bool{}
	for _, m := range codeSpan.FindAllStringSubmatch(layout, -1) {
		listed[strings.TrimSuffix(m[1], "/")] = true
	}
	dirs := map[string]bool{}
	for _, path := range gosource.Files(t, root) {
		if !strings.HasSuffix(path, "_test.go") && filepath.Dir(path) != root {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			dirs[filepath.ToSlash(rel)] = true
		}
	}
	for dir := range dirs {
		if strings.HasPrefix(dir, "ent/") && !listed[dir] {
			continue
		}
		if !listed[dir] {
			t.Errorf("README.md's Code layout does not name the package %s/", dir)
		}
	}
	if len(dirs) < 20 {
		t.Errorf("only %d package directories found", len(dirs))
	}
}
