package cmd_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestOfflineScripts runs testdata/offline with every road out of the
// machine leading to one server that counts what reaches it: it is the
// HTTP and HTTPS proxy, Gemini's and OpenAI's base URL and the embedder's
// endpoint, and the API keys are set, as in a shell configured for other
// tools. `requests N` asserts how many requests arrived since the last
// check; `requests` with no N, at least one.
func TestOfflineScripts(t *testing.T) {
	// Its scripts are isolated like TestScripts' and run beside them.
	t.Parallel()
	var (
		mu   sync.Mutex
		seen = map[string]int{} // per script, by its work directory
	)
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "offline"),
		Setup: func(env *testscript.Env) error {
			isolate(env)
			key := env.WorkDir
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen[key]++
				mu.Unlock()
				http.Error(w, "the test stands in for every provider and answers nothing", http.StatusBadGateway)
			}))
			env.Defer(srv.Close)
			for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"} {
				env.Setenv(v, srv.URL)
			}
			env.Setenv("NO_PROXY", "")
			env.Setenv("no_proxy", "")
			env.Setenv("GEMINI_API_KEY", "AIzaSyTestKeyOfAnotherTool0000000000000")
			env.Setenv("GOOGLE_API_KEY", "AIzaSyTestKeyOfAnotherTool0000000000000")
			env.Setenv("OPENAI_API_KEY", "sk-test-key-of-another-tool")
			env.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
			env.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
			env.Setenv("PROVIDER_URL", srv.URL+"/v1")
			env.Setenv("SERVER_KEY", key)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"requests": func(ts *testscript.TestScript, neg bool, args []string) {
				key := ts.Getenv("SERVER_KEY")
				mu.Lock()
				n := seen[key]
				seen[key] = 0
				mu.Unlock()
				switch {
				case len(args) == 1:
					want, err := strconv.Atoi(args[0])
					ts.Check(err)
					if (n == want) == neg {
						ts.Fatalf("%d requests reached the provider, want %d", n, want)
					}
				case len(args) == 0:
					if (n > 0) == neg {
						ts.Fatalf("%d requests reached the provider", n)
					}
				default:
					ts.Fatalf("usage: requests [N]")
				}
			},
		},
		RequireExplicitExec: true,
	})
}
