//! The mailer: sends the `emails` outbox over SMTP (TLS, STARTTLS or plain, with authentication,
//! as `RECUR_SMTP_URL` says), or without SMTP writes each message as an `.eml` file in
//! `<data dir>/mail`. Failed sends are retried with backoff. A pay-now link is put into its
//! e-mail here, as it is sent.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::TimeDelta;
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use recur_domain::schedule::email_retry_at;
use tokio::task::JoinSet;

use super::credits;
use crate::config::Config;
use crate::links;
use crate::platform::Platform;
use crate::store::emails::{self, OutgoingEmail};
use crate::store::outbox::LINK_MARKER;

/// Time-out of one SMTP conversation.
const SMTP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a mailer holds an e-mail it is sending: longer than a send can take, short enough
/// that another process takes over soon after a crash.
const LEASE: TimeDelta = TimeDelta::seconds(20);

/// How often the mailer looks for e-mails when idle.
const IDLE_POLL: Duration = Duration::from_millis(500);

/// Where messages go.
enum Transport {
    /// An SMTP server.
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    /// `.eml` files in a directory (no SMTP configured).
    Files(PathBuf),
}

/// The e-mail with its links in place: the pay-now link for [`LINK_MARKER`] and the signed PDF
/// link of each credit note it lists ([`credits::with_links`]). Their tokens and signatures are
/// derived from the server key as the message goes out, so the outbox never holds them.
fn with_link(state: &Platform, mut email: OutgoingEmail) -> OutgoingEmail {
    if let Some(session_key) = &email.link_session {
        let url = links::pay_now_url(state, session_key);
        email.text_body = email.text_body.replace(LINK_MARKER, &url);
        email.html_body = email.html_body.replace(LINK_MARKER, &url);
    }
    let now = state.clock.now();
    email.text_body = credits::with_links(state, email.merchant_id, &email.text_body, false, now);
    email.html_body = credits::with_links(state, email.merchant_id, &email.html_body, true, now);
    email
}

/// Sends e-mails.
pub struct Mailer {
    transport: Transport,
    from: Mailbox,
    /// Right-hand side of generated `Message-ID`s.
    domain: String,
}

impl Mailer {
    /// Sends in flight at once, each on an SMTP connection of its own: e-mails are leased this
    /// many at a time, so every leased one starts at once and its lease covers its send.
    pub const CONCURRENCY: usize = 8;

    /// A mailer for `config`: SMTP when `RECUR_SMTP_URL` is set, `.eml` files otherwise.
    pub fn new(config: &Config) -> anyhow::Result<Self> {
        let from: Mailbox = config.mail.from.parse().with_context(|| {
            format!(
                "RECUR_MAIL_FROM {:?} is not an e-mail address",
                config.mail.from
            )
        })?;
        let transport = match &config.mail.smtp_url {
            Some(url) => Transport::Smtp(
                AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                    .context("RECUR_SMTP_URL is not a valid smtp:// or smtps:// URL")?
                    .timeout(Some(SMTP_TIMEOUT))
                    .build(),
            ),
            None => Transport::Files(config.data_dir.join("mail")),
        };
        let domain = from.email.domain().to_string();
        Ok(Self {
            transport,
            from,
            domain,
        })
    }

    /// Where messages go, for the start-up log line.
    pub fn destination(&self) -> String {
        match &self.transport {
            Transport::Smtp(_) => "SMTP (RECUR_SMTP_URL)".into(),
            Transport::Files(dir) => format!(".eml files in {}", dir.display()),
        }
    }

    /// Leases up to [`Mailer::CONCURRENCY`] due e-mails in one statement, sends them at once,
    /// and records every outcome in one transaction; returns how many it tried.
    pub async fn run_pass(self: &Arc<Self>, state: &Platform) -> anyhow::Result<usize> {
        let now = state.clock.now();
        let limit = i64::try_from(Self::CONCURRENCY).unwrap_or(i64::MAX);
        let leased = emails::lease_due(&state.store, now, now + LEASE, limit).await?;
        let tried = leased.len();
        if tried == 0 {
            return Ok(0);
        }
        let mut sends = JoinSet::new();
        for email in leased {
            let email = with_link(state, email);
            let mailer = self.clone();
            sends.spawn(async move {
                let message_id = format!(
                    "<email-{}.{}@{}>",
                    email.id,
                    email.created_at.timestamp_micros(),
                    mailer.domain
                );
                let sent = mailer.send(&email, &message_id).await;
                (email, message_id, sent)
            });
        }
        let mut outcomes = Vec::with_capacity(tried);
        while let Some(outcome) = sends.join_next().await {
            outcomes.push(outcome.context("an e-mail send task failed")?);
        }
        let mut tx = state.store.begin().await?;
        let mut recorded = Vec::with_capacity(tried);
        for (email, message_id, sent) in outcomes {
            match sent {
                Ok(()) => {
                    emails::mark_sent(&mut tx, email.id, &message_id, state.clock.now()).await?;
                    recorded.push("sent");
                }
                Err(error) => {
                    let failed = u32::try_from(email.attempts + 1).unwrap_or(u32::MAX);
                    let retry_at = email_retry_at(failed, state.clock.now());
                    let error = format!("{error:#}");
                    tracing::warn!(email_id = email.id, %error, retry = retry_at.is_some(), "sending an e-mail failed");
                    emails::mark_failed(&mut tx, email.id, &error, retry_at).await?;
                    recorded.push(if retry_at.is_some() {
                        "retry"
                    } else {
                        "failed"
                    });
                }
            }
        }
        tx.commit().await?;
        for outcome in recorded {
            state.metrics.email_send(outcome);
        }
        Ok(tried)
    }

    /// Runs the mailer until the task is dropped.
    pub async fn run(self: Arc<Self>, state: Arc<Platform>) {
        tracing::info!(destination = %self.destination(), "mailer started");
        loop {
            match self.run_pass(&state).await {
                Ok(tried) if tried > 0 => continue,
                Ok(_) => {}
                Err(error) => tracing::warn!(error = %format!("{error:#}"), "mailer pass failed"),
            }
            tokio::time::sleep(IDLE_POLL).await;
        }
    }

    async fn send(&self, email: &OutgoingEmail, message_id: &str) -> anyhow::Result<()> {
        let to: Mailbox = email
            .to_address
            .parse()
            .with_context(|| format!("recipient {:?} is not an address", email.to_address))?;
        let mut message = Message::builder().from(self.from.clone());
        // The support e-mail passed the API's e-mail rule; one lettre cannot read goes without.
        match email.reply_to.as_deref().map(str::parse::<Mailbox>) {
            Some(Ok(reply_to)) => message = message.reply_to(reply_to),
            Some(Err(error)) => {
                tracing::warn!(email_id = email.id, %error, "Reply-To left out: not an address");
            }
            None => {}
        }
        let message = message
            .to(to)
            .subject(&email.subject)
            .message_id(Some(message_id.to_string()))
            .multipart(
                MultiPart::alternative()
                    .singlepart(
                        SinglePart::builder()
                            .header(ContentType::TEXT_PLAIN)
                            .body(email.text_body.clone()),
                    )
                    .singlepart(
                        SinglePart::builder()
                            .header(ContentType::TEXT_HTML)
                            .body(email.html_body.clone()),
                    ),
            )?;
        match &self.transport {
            Transport::Smtp(smtp) => {
                smtp.send(message).await?;
            }
            Transport::Files(dir) => {
                // Named by the message id: a re-send after a crash rewrites the same file.
                tokio::fs::create_dir_all(dir).await?;
                let name = format!("email-{}.eml", email.id);
                let partial = dir.join(format!(".{name}.partial"));
                tokio::fs::write(&partial, message.formatted()).await?;
                tokio::fs::rename(&partial, dir.join(name)).await?;
            }
        }
        Ok(())
    }
}
