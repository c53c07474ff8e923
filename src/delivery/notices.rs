//! E-mails to a merchant about its own account, rendered from the `email/` templates into the
//! outbox in the transaction of the change: today, that a webhook endpoint was disabled after
//! five days of failures (DESIGN §12).

use recur_domain::time::format_utc;

use crate::platform::Platform;
use crate::store::merchants::Merchant;
use crate::store::outbox::{MailKind, NewEmail};
use crate::store::webhook_endpoints::Disabled;

/// The e-mail telling `merchant` (at its support address `to`) that `endpoint` was disabled.
pub fn endpoint_disabled(
    state: &Platform,
    merchant: &Merchant,
    endpoint: &Disabled,
    to: String,
) -> anyhow::Result<NewEmail> {
    let context = minijinja::context! {
        merchant_name => merchant.name,
        endpoint_id => endpoint.endpoint_key,
        url => endpoint.url,
        failing_since => format_utc(endpoint.failing_since),
        disabled_at => format_utc(endpoint.disabled_at),
    };
    let render = |name: &str| -> Result<String, minijinja::Error> {
        state
            .templates
            .get_template(name)
            .and_then(|t| t.render(&context))
    };
    Ok(NewEmail {
        merchant_id: merchant.id,
        customer_id: None,
        kind: MailKind::EndpointDisabled,
        to_address: to,
        subject: format!("Webhook endpoint {} was disabled", endpoint.endpoint_key),
        text_body: render("email/endpoint_disabled.txt")?,
        html_body: render("email/endpoint_disabled.html")?,
        link_session: None,
        reply_to: None,
    })
}
