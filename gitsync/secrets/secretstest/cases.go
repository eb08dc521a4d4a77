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
	{"test mode key sk_t" + "est_4eC39HqLyjWDarjtT1zdp8dc", "a Stripe secret key"},
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

	// Families a held-out table showed passing (issue 19): vendor tokens,
	// key bodies without their BEGIN line, passwords on command lines, in
	// .pgpass and .netrc lines, in prose and in other languages, and
	// tokens split by invisible characters, backticks or a line break.
	{"Google access token for the smoke test: ya" + "29.c.fSvPhmVQ3WR6qlcHbnVLccpj4PgcfVP9iO9RCTjvt-fxMhN_LMC80MVY3Gvjm0FCj20082vvg-TMzG0GibOBZME4zlt1ASWhrMtdyHYDED1GIPcvyEoQrvuI", "a Google OAuth token"},
	{"refresh_token saved as 1/" + "/0g3fJ2BJCUdbpyuwYkE9u6snIjdyPYiTV3wHi4YDQPBSREk06dScO2Y1UQoXk4", "a Google OAuth token"},
	{"push key AAAAzqzNcM8:AP" + "A91bBWGil7KvYct18vSMcHBWMdj3oTtEblIbXBnYBVR4zWnrAFu-a1G-j7uIgSvs8C1CtC7yjhzfXIUZ17God_HaMpyPPvu6B07EkcHCGVRdqK9GmAsN3M8yFFArGxpfEcIdAUCB24_S-tdY", "a Firebase Cloud Messaging server key"},
	{"MAPBOX_SECRET sk" + ".eyJ1IjoiZmxlZXQiLCJhIjoiG5LX9ZEqCMg5Zz24Bjf61i6rzHI2Gm.CYatxoRp7gmNY0VMjYkWFP", "a Mapbox secret token"},
	{"OSS uploader uses LT" + "AIbnK6xiSDwWQCfikX", "an Alibaba Cloud AccessKey id"},
	{"aliyun secret for the OSS uploader 8H3abcCZj5alWBad99As9m34OCil0u", "an Alibaba Cloud AccessKey secret"},
	{"Authorization: SS" + "WS 00wI4Biv5lhGcoe6x0WNOZDyvRKj1HEPsK14wtugrX", "an Okta API token"},
	{"vault login with s.Sc6qkCCvQmbbqLBlfo2FOXaI", "a HashiCorp Vault token"},
	{"twilio token for SMS alerts: fc6ff4f9cb9c4b326a7e104a71e012ad", "a Twilio auth token"},
	{"datadog key 05de2fc63152942229d001776f9cee33 for the staging agent", "a Datadog API or application key"},
	{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKdkBt0pbLz5IKUwo1UMLHsi1mpI5kaB\n72Sf+1Lw1Baxy5jKVO9LvOcOOG5nMs3FJ5C54SUzXHpaRKrIo8M=", "a private key"},
	{"ec key body MHcCAQEEIJyg9XPmQeqnB5N435DHZu4BPbWrG+FmgGD+HKefiD5KF2TJ7QcYDSh5OkXu5p1Cfs5z", "a private key"},
	{"b3" + "BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWGwdZ9gTtl2XOC8erZDwS", "a private key"},
	{"mariadb -uadmin -p31vpT9hBkKqw -h 10.1.2.3", "a password on a command line"},
	{"curl --user ops:bY8FhLB89PW https://grafana.internal/api/health", "a password on a command line"},
	{"sshpass -p \"rFCjErzmLR\" scp build.tgz ops@10.9.0.2:", "a password on a command line"},
	{"podman login quay.io -u robot -p UVXhq1SBXysyYIOQ", "a password on a command line"},
	{"redis-cli -h cache.internal -a cw9pu6rHYt6AjI ping", "a password on a command line"},
	{"analytics.internal:5432:warehouse:etl:op7J6oEuYj199J", "a .pgpass password"},
	{"machine nexus.internal login deployer password NFucN1uxtSr7VoT", "a .netrc password"},
	{"the staging rabbitmq password is 9Ys1J%BthzI2", "a password"},
	{"the wifi passphrase was CLCk-M3KT-pW7", "a password"},
	{"ADMIN_PW=IGcIKhjBmIfZ", "a password"},
	{"Kennwort: jDjFqX#gLL", "a password"},
	{"hasło=493TruEW!2", "a password"},
	{"salasana: qYLm9XD42", "a password"},
	{"пароль: xG0VkFY0k5", "a password"},
	{"gl" + "pat-9aNsp_ZD\u200b8gYhxfmz4rPz", "a GitLab token"},
	{"np" + "m_rORPKs339p\u00adC0XgCwWakEiZnKaUMk8mFVrZAP", "an npm token"},
	{"token `np" + "m_NEQ30Rn2DCqS5e`\u200c`fDxUh0UdRGcZjxInrySXUs`", "an npm token"},
	{"the bot uses xo" + "xb-149661311980-1293096397541-\n  ckOEgpcRnQp49iDG7OeJ3VhX", "a Slack token"},
	{"DOPPLER_TOKEN=dp" + ".st.dev_evcr.9CnILgTuJNgHhDLwsx5Y9wlL20FgUIdZz3yOf1J4s0t", "a Doppler token"},
	{"VAULT_TOKEN=b.FhStbdj3jZrZFIiA8vAZkLGVJzmC8DkdZs1Kr0qgnPhrbCr8HPoBQJL2TTUuylYM2H1cE6otthKi9aVNThudmUz9VB", "a HashiCorp Vault token"},
	{"the jenkins admin pwd was FmAU@NLnY51", "a password"},
	{"user: deploy, pass: Yx0y3R7njD", "a password"},
	{"> CI pushes with gl" + "pat-zymMlopiWf\n> qUyHRSIf8N", "a GitLab token"},
	{"la contraseña del router es Ql2K%vf8T3", "a password"},
	{"le mot de passe du wifi est HRXfE-uzc8", "a password"},
	{"the postmark server password is 6cda4ccb-01f3-5efe-8ed5-f03644f758cd", "a password"},
	{"the memcached auth string is nx7IfDH59mMDd", "a secret key or token"},
	{"our staging api key is win86TkVYC4M7l8GQlch", "a secret key or token"},
}

// Lookalikes look like credentials and are not: secrets.Detect must let
// every one through.
var Lookalikes = []string{
	// Hashes and identifiers.
	"fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b",
	"reverted a94a8fe, see the changelog",
	"request id 123e4567-e89b-12d3-a456-426614174000 in the logs",
	"ULIDs look like 01ARZ3NDEKTSV4RRFFQ69G5FAV",
	// An address after the word token (acolyte's own usage error, issue 35).
	"--no-token on localhost.:8765: only a loopback address may serve without a token",
	"the token on staging.internal.example:8443 expires hourly",
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
	// Near the families of issue 19: the same words and shapes, no secret.
	"datadog agent built from commit 3f786850e387550fdab836ed7e6dc881de23001b",
	"the Vault address is https://vault.internal:8200; the token lives in ~/.vault-token",
	"config key s.retry.max_attempts sets the retries",
	"mariadb -u root -p asks for the password",
	"curl -u \"$USER:$PASS\" https://status.internal/health",
	"sshpass -f ~/.sshpass ssh deploy@bastion",
	"docker login --username ci --password-stdin < token.txt",
	"pgpass lines look like hostname:port:database:username:password",
	"the passphrase is required on first boot",
	"Kennwort ändern unter Einstellungen",
	"see internal/agent/toolbox/sandbox\ngo for the guard",
	"a DER certificate MIIFazCCA1OgAwIBAgIRAIIQz7DSQONZRGPgu2OCiwAwDQYJKoZIhvcNAQELBQAw",
	"ya29 is the prefix of a Google access token",
	"the PW column is hashed with argon2id",
	"the password is sha256-hashed before it is stored",
	"run `go test` `./...` before pushing",
	"password = os.Args[4]",
	"the password reset link is valid for 24h",
	"the token is read from the keychain at start-up",
	"--- PASS: TestFreshTable (0.02s)",
	"pass: true",
	"> quoting the changelog of release\n> 2.4.1: fixed the login page",
	// Credentials the issuers publish as examples (see README, "Secret
	// guard"): public, so allowed; the same shapes with other values are not.
	"Stripe's docs call the API with sk_t" + "est_4eC39HqLyjWDarjtT1zdp7dc",
	"jwt.io's sample: eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
}
