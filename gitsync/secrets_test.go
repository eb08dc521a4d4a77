package gitsync

import "testing"

func TestDetectSecret(t *testing.T) {
	positives := []struct{ content, what string }{
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "a private key"},
		{"-----BEGIN RSA PRIVATE KEY-----", "a private key"},
		{"deploy uses AKIAIOSFODNN7EXAMPLF for S3", "an AWS access key id"},
		{"token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 works", "a GitHub token"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "a GitHub token"},
		{"slack bot xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", "a Slack token"},
		{"GOOGLE=AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "a Google API key"},
		{"use sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345 for openai", "an OpenAI or Anthropic API key"},
		{"sk-ant-api03-Xy7zAbCdEfGh1234IjKlMnOpQr", "an OpenAI or Anthropic API key"},
		{"stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "a Stripe secret key"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "a JSON Web Token"},
		{"db is postgres://admin:s3cr3tPass@db.internal:5432/app", "a password in a URL"},
		{"password=hunter2hunter2", "a credential assignment"},
		{`api_key: "f3a9c1d27b8e4a6f"`, "a credential assignment"},
		{"export GEMINI_API_KEY=qwerty12345asdfg", "a credential assignment"},
	}
	for _, p := range positives {
		what, found := DetectSecret(p.content)
		if !found || what != p.what {
			t.Errorf("DetectSecret(%q) = %q, %v; want %q", p.content, what, found, p.what)
		}
	}
	negatives := []string{
		"the API key is read from GEMINI_API_KEY",
		"set GEMINI_API_KEY=$GEMINI_API_KEY in CI",
		"apiKey := os.Getenv(\"OPENAI_API_KEY\")",
		"password: ${DB_PASSWORD}",
		"token: <your token here>",
		"secret = config.secretValue is loaded at startup",
		"max_tokens: 100000000 is the budget",
		"tokenizer: sentencepiece-based",
		"the password field is hashed with bcrypt",
		"connect with postgres://user:password@localhost/db in examples",
		"scikit-learn uses sk-learn style estimators for regressions",
		"we use sk-learn-compatible-estimator-interfaces everywhere",
		"password: ********",
		"read the ghp_ prefix docs; GitHub tokens start with ghp_",
		"run git log --format=%H to get the commit",
		"ULIDs look like 01ARZ3NDEKTSV4RRFFQ69G5FAV",
	}
	for _, n := range negatives {
		if what, found := DetectSecret(n); found {
			t.Errorf("DetectSecret(%q) flagged %s", n, what)
		}
	}
}
