//! E-mails per second from the outbox to a local SMTP server, against the rate at which a plain
//! SMTP client gets the same messages accepted by that same server, in one run.
//!
//! `cargo bench --bench mail -- [--emails N] [--backend sqlite|postgres]` (both when absent)
//!
//! The server (tests/api/receivers.rs) accepts every message at once. Raw: N messages of the same
//! shape from as many concurrent tasks as the mailer sends at once, over lettre's pooled SMTP
//! transport. recur: N due e-mails in the outbox, sent by the mailer of `recur serve` (each
//! leased, sent and recorded in the database).

#[path = "support/allocator.rs"]
mod allocator;
#[path = "support/args.rs"]
mod args;
#[path = "support/drain.rs"]
mod drain;
#[path = "support/report.rs"]
mod report;
#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/state.rs"]
mod state;

#[path = "../tests/api/receivers.rs"]
#[allow(dead_code)]
mod receivers;

use std::time::Instant;

use args::Args;
use lettre::message::header::ContentType;
use lettre::message::{MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use receivers::SmtpSink;
use recur::delivery::mail::Mailer;
use recur::domain::membership::EmailKind;
use recur::store::outbox::{self, MailKind, NewEmail};
use recur::store::Backend;
use scratch::ScratchDatabase;

/// Untimed messages before the raw rate is measured.
const WARM_UP: usize = 1000;

/// E-mails written per insert statement (11 parameters each, under both engines' limits).
const INSERT_CHUNK: usize = 500;

fn subject() -> String {
    "Your receipt from Bench Merchant".to_string()
}

fn text_body() -> String {
    "Thank you for your payment of 29.97 EUR for Bench plan.\n".repeat(8)
}

fn html_body() -> String {
    format!(
        "<html><body>{}</body></html>",
        "<p>Thank you for your payment of <b>29.97 EUR</b> for Bench plan.</p>".repeat(24)
    )
}

fn message(i: usize) -> Message {
    Message::builder()
        .from("Billing <billing@shop.example>".parse().unwrap())
        .to(format!("raw-{i}@example.com").parse().unwrap())
        .subject(subject())
        .message_id(Some(format!("<raw-{i}@shop.example>")))
        .multipart(
            MultiPart::alternative()
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_PLAIN)
                        .body(text_body()),
                )
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_HTML)
                        .body(html_body()),
                ),
        )
        .unwrap()
}

/// Messages per second a plain pooled SMTP client gets accepted, from `concurrency` tasks.
async fn raw_rate(sink: &SmtpSink, n: usize, concurrency: usize) -> f64 {
    let transport: AsyncSmtpTransport<Tokio1Executor> =
        AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("127.0.0.1")
            .port(sink.port)
            .build();
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|w| {
            let transport = transport.clone();
            tokio::spawn(async move {
                for i in (w..n).step_by(concurrency) {
                    transport.send(message(i)).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    n as f64 / started.elapsed().as_secs_f64()
}

/// E-mails per second the mailer sends from an outbox holding `n` due ones.
async fn recur_rate(sink: &SmtpSink, database_url: &str, n: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let settings = [("RECUR_SMTP_URL", format!("smtp://127.0.0.1:{}", sink.port))];
    let (state, merchant) = state::with_merchant(database_url, dir.path(), &settings).await;
    let now = chrono::Utc::now();
    let customer_id: i64 = sqlx::query_scalar(
        "INSERT INTO customers (merchant_id, customer_key, processor_key, first_name, last_name, \
         email, email_identity, phone, country_code, tax_ids, created_at, updated_at) \
         VALUES ($1, 'cstmr_mailbench', $2, 'Mail', 'Bench', 'mail@example.com', \
         'mail@example.com', '+4915112345678', 'DE', '[]', $3, $3) RETURNING id",
    )
    .bind(merchant.merchant_id)
    .bind(&merchant.processor_key)
    .bind(now.timestamp_micros())
    .fetch_one(state.store.writer())
    .await
    .unwrap();
    let emails: Vec<NewEmail> = (0..n)
        .map(|i| NewEmail {
            merchant_id: merchant.merchant_id,
            customer_id: Some(customer_id),
            kind: MailKind::Customer(EmailKind::Receipt),
            to_address: format!("customer-{i}@example.com"),
            subject: subject(),
            text_body: text_body(),
            html_body: html_body(),
            link_session: None,
            reply_to: None,
        })
        .collect();
    let mut tx = state.store.begin().await.unwrap();
    for chunk in emails.chunks(INSERT_CHUNK) {
        outbox::insert_emails(&mut tx, chunk, now, now)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    let before = sink.delivered().len();
    let mailer = state.mailer.clone().run(state.platform.clone());
    let rate = drain::rate_until_drained(&state.store, "emails", "Sent", n, mailer).await;
    assert_eq!(
        sink.delivered().len() - before,
        n,
        "each e-mail arrived once"
    );
    rate
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.parsed("--emails", 10_000);
    let rows = report::per_backend(args.backends(), |backend| run(backend, n));
    report::print_table(
        &format!(
            "e-mails to a local SMTP server, {} sends at once",
            Mailer::CONCURRENCY
        ),
        &[
            "backend",
            "e-mails",
            "raw messages/s",
            "recur e-mails/s",
            "recur / raw",
        ],
        rows,
    );
}

/// Measures one backend's row.
async fn run(backend: Backend, n: usize) -> Vec<String> {
    let sink = SmtpSink::start().await;
    let database = ScratchDatabase::create(backend, "mail").await;
    let concurrency = Mailer::CONCURRENCY;
    raw_rate(&sink, WARM_UP, concurrency).await;
    let raw = raw_rate(&sink, n, concurrency).await;
    let recur = recur_rate(&sink, &database.url, n).await;
    database.remove().await;
    vec![format!(
        "| {backend:?} | {n} | {raw:.0} | {recur:.0} | {:.0}% |",
        100.0 * recur / raw
    )]
}
