// Package secretstest holds the credentials and look-alikes that the
// detector's own tests and gitsync's test of every road into .acolyte/ both
// run, so that the two agree on what must be refused and what must not.
package secretstest

// Case is a text holding one credential, and the kind the detector must name.
type Case struct{ Content, Kind string }

// Every credential below is fabricated: random characters in the issuer's
// documented shape. Prefixes are split from bodies ("gh"+"p_…") so that
// secret scanners reading this source, GitHub's push protection included,
// do not take the fixtures for leaks.

// Credentials are credentials in the shapes people paste into notes, each
// with the kind secrets.Detect must name.
var Credentials = []Case{
	// Cloud providers.
	{"deploy uses AKI" + "AQX7NR3JTMB2W5KPL for S3", "an AWS access key id"},
	{"the aws secret is sFtDyvikDrPe6wmMvQGY7nU4dINx2eZRwN/ptWPY, rotate it", "an AWS secret access key"},
	{"[default]\naws_access_key_id = AKI" + "A2QW7ER4TY6UI8OP0\naws_secret_access_key = xAwIZ0DqK7fCOokPyQnP8o4FG5B5EGnwAp/cz2jl", "an AWS access key id"},
	{"aws_secret_access_key = xAwIZ0DqK7fCOokPyQnP8o4FG5B5EGnwAp/cz2jl", "an AWS secret access key"},
	{`{"type": "service_account", "project_id": "acolyte-ci", "private_key": "-----BEGIN ` + `PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"}`, "a Google Cloud service-account key"},
	{"maps use AI" + "zaobT_Jox17RWEVxropmO6W9-yNsOSUTbfUwz", "a Google API key"},
	{"oauth client secret GOCS" + "PX-ov1sjBNMFZlvLu5MhikfhyPsrTEI", "a Google OAuth client secret"},
	{"DefaultEndpointsProtocol=https;AccountName=acolytelogs;Account" + "Key=XdHJwqRIsBIrlyDrWNHa9ZPJ055h3ZY7Isg+qOwVxQ3pZ9wpzcVRMk245Brxqq/KyzsOnFg4xarI6F3H+r/up8==;EndpointSuffix=core.windows.net", "an Azure storage account key"},
	{"backups at https://acolytelogs.blob.core.windows.net/db?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31T00:00:00Z&s" + "ig=cUb1ErTHEZnVwX5lfiA5nYQnLqFWfDNJGhjaIFw40YU%3D", "an Azure shared access signature"},
	{"the app registration's client secret is cYq8" + "Q~vc4eDqFj1ZKnb8EXW~_srXpBKG7mAbC", "an Azure AD client secret"},
	{"doctl auth init -t do" + "p_v1_feb947e0fa5f9b3e236a3305ae95cdff4fbccfe78db0dd922e863a072bfcc6ce", "a DigitalOcean token"},
	{"HEROKU_API_KEY=" + "f9aa6a0a-dfb9-0439-403b-6e3150e5e9b0", "a Heroku API key"},
	{"VAULT_TOKEN=hv" + "s.R2gMwNRxovC14Hqrjz16A8eXXJg5tfiL8vA7orfo1hXLnqe3yeuDeWQmeZxldbwrg-WQrsAVZSEzia18ZDLLtxzVMoi", "a HashiCorp Vault token"},
	{"terraform login stored p3ochmtt1qsi25.atlas" + "v1.wBcdqt61C4QttZQ_dKKfR9BEo8Ijf_L-LPSX6if6ElAcpkGXv_XjCnGvpYta8JntZfwxus", "a Terraform Cloud token"},
	{"databricks token da" + "pi719596e1085ed77b917c7828131635c7", "a Databricks token"},

	// Source hosting and package registries.
	{"token gh" + "p_kJGcW3ALRUn542ysZySZeuFiEXpVdE58zHYp works", "a GitHub token"},
	{"github_" + "pat_11ABRM7XQ0rM8nkSCV3zwgIj85ZrHnoA8weZPp3nuKP8OvnOhkmlx_FwD7G6uyoUFdzZ8TjWqMsznfBoxZOozgpygBCx", "a GitHub token"},
	{"the app's installation token is gh" + "s_uWud5vcLfbVcAnZYiY33qnzNqYSedLm8273C", "a GitHub token"},
	{"CI_TOKEN: gl" + "pat-TLaFfSX3hD_qgR2k-dhL", "a GitLab token"},
	{"bitbucket app password AT" + "BBqp8yJvcV8f41nzH6juhFa81GZ8TZs0PB", "a Bitbucket app password"},
	{"jira api token AT" + "ATT3xFfGF0lbpMeUU3B9w-Q_0lMUA9wrnFZlPLQuEZpPQh1SigvyeROnphcwvRErpWG18ePYq6Aq", "an Atlassian API token"},
	{"publish with np" + "m_NDTPUIeIeShMFJ2oo5t7t85dNxR5PjYecwJS", "an npm token"},
	{"//registry.npmjs.org/:_authToken=np" + "m_61cEtRJJ0lIoMqd929lBhbBfMIaklHI28PLT", "an npm token"},
	{"//npm.internal.acme.io/:_authToken=3f2a9c1e-7b4d-4e8a-9c2f-1d6b8e0a4f73", "a secret key or token"},
	{"password = pyp" + "i-AgEIcHlwaS5vcmcCJGZXEPBQcHGWAJfTr5CdYunVNLVJ4wyk3XsKYbY7WpUNr5pYPmHg-6SzMoUGfYtFW", "a PyPI token"},
	{"docker login -u acolyte -p dck" + "r_pat_rEKmW3FtU_aa1f5_7BVL0UeEsIT", "a Docker Hub token"},

	// Chat.
	{"slack bot xo" + "xb-123456789012-1234567890123-g7vP0hFozTTnw4XLvNo2a17l", "a Slack token"},
	{"alerts post to https://hooks.slack" + ".com/services/T04ABCD1E/B05FGHI2J/VspspvZ2dnCl9vcG3bQPnpFr", "a Slack webhook URL"},
	{"https://discord" + ".com/api/webhooks/1187654321098765432/F76cNcsqDoIkhUzXm_cPYQZkEwtMnP7tY4s-JaHGsmmf1WHku68v5r7Oea8lQyoBGZ7-", "a Discord webhook URL"},
	{"discord bot: MlMnybmO7XiTn6y2ewkpLRXa" + ".vihwgu.fFUyyZMcj8nlHmN27lsm12UrdN9", "a Discord bot token"},
	{"telegram bot 6123456789:A" + "AMnJTXFE8teKlGQs7DvJroj0_6Pv3u6ANA", "a Telegram bot token"},

	// Payments and commerce.
	{"stripe sk_l" + "ive_DnrGaghCTyvRyzNX7iwymXjw", "a Stripe secret key"},
	{"restricted key rk_l" + "ive_Sixg8clhX8KD5hSObDSh9ghr for reports", "a Stripe secret key"},
	{"square sq0a" + "tp-DFE3_IR-S-kpWe42spqBO6", "a Square access token"},
	{"SQUARE_ACCESS_TOKEN=EA" + "AATO3rOQDopfhZHHF0-EFt8p_bD6i9BPkDj3zHdo1B055YjnhDxS3aQHbOzg7G", "a Square access token"},
	{"braintree uses access_token$pro" + "duction$oe17oz69hf3etjxy$9ae8fb8230ebaf6d4684ffd93758b892", "a PayPal Braintree access token"},
	{"shopify admin token shp" + "at_fc2a01ebeaf3e54ac117dcc1be2a4fef", "a Shopify access token"},

	// Messaging and developer services.
	{"twilio api key S" + "Kcd297064dd1134cf8adc5e633c2e186c", "a Twilio API key"},
	{"SENDGRID=S" + "G.xxPA3i46QE1vNN7r3m4nS_.6398JGsXQFaxMMWbdLJENMCb9HEHcyPNBEW2oNNE9r7", "a SendGrid API key"},
	{"mailgun ke" + "y-f9ae7682b44e5327251efe2102ede2e5", "a Mailgun API key"},
	{"mailchimp 37469252dac001ce101dfdc644f16f10-u" + "s21", "a Mailchimp API key"},
	{"linear lin_" + "api_pkfCyIO3AMtIVsjOQBUjbHsxY0sal4dvHlk5otll", "a Linear API key"},
	{"postman PMA" + "K-923dab6291392139c13c51aa-8929e269ef8809713c969cf257e95631ef", "a Postman API key"},
	{"sentry sntr" + "ys_ZGAblaSGcvHKOydoXn3HiuW3cA3O1I5Nr8ETmaMizPt0jB6lFzWkom0FyXyW", "a Sentry token"},
	{"DOPPLER_TOKEN=dp" + ".st.PBDFscd8D0Gx7gpFALewYGTOpoiPCSfowX4Zl6HYKfQ", "a Doppler token"},
	{"notion integration secr" + "et_89TSxJ1XawyVP4bicoy8zFsbEiPWKJ7Xo31pnGUjlk6", "a Notion token"},
	{"AGE-SECRET-" + "KEY-1ABT6DIVTK4ROUCIXUY1RIRF1S67FIN1AWXK9BK7NE45GG02Z6FYZED18ZM", "an age secret key"},

	// Model providers.
	{"use sk-p" + "roj-v6TcdUFQM3GDxP8qwn2ol0yw_n1BNjY-8ZXQhITtennoE0m1 for openai", "an OpenAI API key"},
	{"sk-a" + "nt-api03-AWQN-rY8dnyKlBhlBHxryJtiusc3-ZMS8rluXZrQerJnKLwWmKcFEL1XAy5foxwRKbEBwt1XGwF1DFJsChvAIz5rpoTzY", "an Anthropic API key"},
	{"HF_TOKEN=h" + "f_oJHVPtSSMNioZKVLNtFlUlvhqKDKSzoRKp", "a Hugging Face token"},
	{"groq gs" + "k_GXpWIsw0wx8xhBVMmmzn8FV5IrjFeux9nRofmpwunLfS2fYwty08", "a model provider API key"},

	// Private keys.
	{"-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2\n-----END RSA PRIVATE KEY-----", "a private key"},
	{"-----BEGIN EC " + "PRIVATE KEY-----", "a private key"},
	{"-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "a private key"},
	{"-----BEGIN PGP " + "PRIVATE KEY BLOCK-----\n\nlQdGBGV5", "a private key"},
	{"-----BEGIN ENCRYPTED " + "PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI", "a private key"},

	// General shapes.
	{"Authorization: Bearer eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.Q3JQ7Rai-UJQ1cpxKTU5wxLW1fITeqkfa485kB7WEJ8", "a JSON Web Token"},
	{"curl -H 'Authorization: Bear" + "er pb5a8ZcRvu0lZ50ejyrFt.IH8QK_DGJrexiffisC' https://api.acme.io", "a bearer token"},
	{"Authorization: Bas" + "ic ZGVwbG95Olpvc3plNGJ2QHBycTlFYnM=", "HTTP basic-auth credentials"},
	{"cache at redis://:Pq7wZt2Lk9@cache.internal:6379/0", "a password in a URL"},
	{"db is postgres://admin:s3cr3tPass@db.internal:5432/app", "a password in a URL"},
	{"DATABASE_URL=mysql://root:Tr0ub4dor&3@mysql.prod.acme.io/orders", "a password in a URL"},
	{"mongodb+srv://svc-reader:Xk29fLq7Vb@cluster0.ab1cd.mongodb.net/app", "a password in a URL"},
	{"broker amqp://orders:7hQ2vN9xRm@rabbit.internal:5672/", "a password in a URL"},
	{"git remote add origin https://ci-bot:H7vK2pQ9zR3m@git.acme-corp.io/acolyte.git", "a password in a URL"},
	{"SECRET_KEY=Zq8vR2mXk4Tn7Lp1Wc9Yb3Hf6Jd0Gs5Ae8Ku2Nx4", "a secret key or token"},
	{"export GEMINI_API_KEY=qwerty12345asdfg", "a secret key or token"},
	{`api_key: "f3a9c1d27b8e4a6f"`, "a secret key or token"},
	{"production:\n  client_secret: hEVCWTCRhWpXQnZQsCgjSXXCqhSzgAbB\n", "a secret key or token"},
	{`{"webhookSecret": "FX6nxVC5GSPnPrbIQIqqCQzkOl+HsPeQFdG6E6BIQ0R9"}`, "a secret key or token"},
	{"PASSWORD=letmein", "a password"},
	{"database:\n  password: hunter2\n", "a password"},
	{`{"user": "deploy", "password": "Zosze4bv@prq9Ebs"}`, "a password"},
	{"DB_PASSWORD='correct horse battery staple'", "a password"},
	{"spring.datasource.password=Summer2024!", "a password"},
	{"PGPASSWORD=Tr0ub4dor psql -h db.internal", "a password"},
	{"mysql -u root --password=Wint3rIsC0ming", "a password"},
	{`dbPass := "s3cr3t-Value"`, "a password"},
}

// Lookalikes look like credentials and are not: secrets.Detect must let
// every one through.
var Lookalikes = []string{
	// Hashes and identifiers.
	"fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b",
	"reverted a94a8fe, see the changelog",
	"request id 123e4567-e89b-12d3-a456-426614174000 in the logs",
	"ULIDs look like 01ARZ3NDEKTSV4RRFFQ69G5FAV",
	"echo VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw== | base64 -d",
	`"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUR8UXyvtIklthCbeNXw=="`,
	"golang.org/x/crypto v0.31.0 h1:ihbySMvVjLAeSH1IbfcRTkD/iNscyz8rGzjF/E5hV6U=",
	"image pinned to sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	// Placeholders.
	"API_TOKEN=<your-token>",
	"api_key: ${API_KEY}",
	"GITHUB_TOKEN=$TOKEN",
	"password: changeme",
	"SECRET_KEY=xxxx",
	"PASSWORD=***",
	"token: <your token here>",
	"password: ${DB_PASSWORD}",
	"password: ********",
	"token: ${{ secrets.GITHUB_TOKEN }}",
	"aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
	"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	// Local services with their default credentials, URLs without one.
	"postgres://postgres:postgres@localhost:5432/db",
	"redis://localhost:6379/0",
	"amqp://guest:guest@localhost:5672/",
	"connect with postgres://user:password@localhost/db in examples",
	"docs at https://github.com/acolyte-dev/acolyte/blob/main/README.md",
	"clone git@github.com:acolyte-dev/acolyte.git",
	// Prose and code about credentials.
	"the API key is read from GEMINI_API_KEY",
	"rotate the token every 90 days",
	"set PASSWORD in the environment",
	"set GEMINI_API_KEY=$GEMINI_API_KEY in CI",
	"apiKey := os.Getenv(\"OPENAI_API_KEY\")",
	"const tokenSecretKeyName = \"x-api-key\"",
	"secret = config.secretValue is loaded at startup",
	"the password field is hashed with bcrypt",
	"Password: reset it from the admin console",
	"max_tokens: 100000000 is the budget",
	"tokenizer: sentencepiece-based",
	"read the ghp_ prefix docs; GitHub tokens start with ghp_",
	"scikit-learn uses sk-learn style estimators for regressions",
	"we use sk-learn-compatible-estimator-interfaces everywhere",
	"publicKey: MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE",
	"nextPageToken: CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA",
	// Code and tool output that a scan of 320 MB of Go modules and the Go
	// source tree took for credentials before these cases were added.
	"--- PASS: TestGoList (0.21s)",
	`NSS_BUFLEN_PASSWD     = 1024   // pwd.h:123:1:`,
	`cmd.Env = append(os.Environ(), "PWD=/tmp")`,
	"Password: User's password",
	"password := os.Args[1]",
	"dstKey = dst.hashes[dstIdx].key()",
	"clientAuth := stsexchange.ClientAuthentication{",
	`Value map[string]string ` + "`" + `protobuf:"bytes,2,rep,name=value" protobuf_key:"bytes,1,opt,name=key,proto3"` + "`",
	`"encryptionKey": "encryptionKey1024",`,
	"key: zones/us-central1-a",
	`TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"`,
	"GCLOUD_TESTS_API_KEY=abcdefghijk123456789",
	`CertAlgoSKECDSA256v01 = "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com"`,
	// Versions, paths, colours.
	"requires go 1.26.8 and acolyte v0.4.0-rc.1+build.7",
	"config lives in /home/dev/.config/acolyte/config.json",
	"key_file: ./certs/server-2024.key",
	"brand colour #1e90ff, hover #ff8c00",
	"run git log --format=%H to get the commit",
}
