//! `RECUR_WEBHOOK_SOURCE_ADDRESS`: deliveries leave from the configured local address, so
//! merchants can allow-list it. Linux routes all of 127/8 to loopback, so a receiver on
//! 127.0.0.1 sees a connection from 127.0.0.2.

use crate::backend_matrix;
use crate::harness::TestServer;
use crate::receivers::WebhookReceiver;

backend_matrix!(
    webhooks_leave_from_the_configured_source_address,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let mut settings = receiver.settings().to_vec();
        settings.push(("RECUR_WEBHOOK_SOURCE_ADDRESS", "127.0.0.2".into()));
        let server = TestServer::start_with_owned(backend, &settings).await;
        let token = server.token().await;
        let customer = server.create_customer(&token, "src@example.com").await;
        let mut body = server.membership_body(&customer, "order-src");
        body["webhookUrl"] = receiver.url.clone().into();
        let start = "2027-03-01T00:00:00Z";
        server.active_membership(&token, start, body).await;
        // The clock's catch-up delivers what is due before it answers.
        server.advance(&token, start).await;

        let received = receiver.received();
        assert!(!received.is_empty(), "the events were delivered");
        for request in &received {
            assert_eq!(request.peer.ip().to_string(), "127.0.0.2");
        }
    }
);
