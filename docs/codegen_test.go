package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creditd/creditd/credittest"
)

// codegenTSConfig compiles the generated code and the document's sources as a bundler-based
// page would, under --strict.
const codegenTSConfig = `{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "target": "es2022",
    "module": "esnext",
    "moduleResolution": "bundler",
    "resolveJsonModule": true,
    "skipLibCheck": true
  },
  "include": ["src/**/*.ts", "codegen.ts"]
}
`

// TestCodegenExampleCompiles follows graphql.md's graphql-codegen set-up as written: its
// codegen.ts and src/live.ts, with the repository's schema.graphqls, generate the client
// preset's code and Graphcache's introspection with the packages of
// testdata/codegen/package-lock.json (graphql 17), and tsc --strict compiles the lot. Without
// npm the test is skipped, except under CI.
func TestCodegenExampleCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("installs and runs graphql-codegen and tsc")
	}
	modules := credittest.NPMPackages(t, filepath.Join("testdata", "codegen"))
	files := map[string]string{}
	for _, block := range fences(t, "graphql.md", "ts") {
		if name, ok := strings.CutPrefix(strings.SplitN(block, "\n", 2)[0], "// "); ok {
			files[name] = block
		}
	}
	schema, err := os.ReadFile(filepath.Join("..", "schema.graphqls"))
	if err != nil {
		t.Fatal(err)
	}
	files["schema.graphqls"] = string(schema)
	files["tsconfig.json"] = codegenTSConfig
	dir, err := os.MkdirTemp(modules, "example-") // inside, so that imports find node_modules
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, name := range []string{"codegen.ts", "src/live.ts", "schema.graphqls", "tsconfig.json"} {
		if files[name] == "" {
			t.Fatalf("graphql.md has no ts block starting with // %s", name)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(modules, "node_modules", ".bin", name), args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run("graphql-codegen", "--config", "codegen.ts")
	for _, generated := range []string{"src/gql/graphql.ts", "src/gql/gql.ts", "src/introspection.json"} {
		if _, err := os.Stat(filepath.Join(dir, generated)); err != nil {
			t.Fatalf("graphql-codegen wrote no %s: %v", generated, err)
		}
	}
	run("tsc", "-p", ".")

	// The scalars are typed as the document says: an amount is a string, not a number.
	bad := strings.Replace(files["src/live.ts"], "export function line(", `export const wrong: number = ({} as ResultOf<typeof Live>).events.company!.outstanding.amount;
export function line(`, 1)
	if err := os.WriteFile(filepath.Join(dir, "src", "live.ts"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(modules, "node_modules", ".bin", "tsc"), "-p", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "Type 'string' is not assignable to type 'number'") {
		t.Fatalf("tsc compiled a Decimal read as a number: %v\n%s", err, out)
	}
}
