//! A merchant's web site for the cashier tests, at `http://merchant.example:<port>` (Chromium maps
//! the name to 127.0.0.1): the example iframe page of `examples/cashier-iframe/` and the pages
//! the cashier redirects to.

use std::collections::HashMap;

use axum::extract::Query;
use axum::response::Html;
use axum::routing::get;
use axum::Router;

/// The running site.
pub struct MerchantSite {
    /// `http://merchant.example:<port>`.
    pub base: String,
    task: tokio::task::JoinHandle<()>,
}

impl MerchantSite {
    /// Starts the site; `cdn` is recur's CDN base URL the shop page loads `cashier.js` from.
    pub async fn start(cdn: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shop = include_str!("../../examples/cashier-iframe/shop.html");
        let app =
            Router::new()
                .route(
                    "/shop",
                    get(
                        move |Query(query): Query<HashMap<String, String>>| async move {
                            Html(shop.replace("__RECUR_CDN_URL__", &cdn).replace(
                                "__CASHIER_URL__",
                                &query["cashier"].replace('&', "&amp;"),
                            ))
                        },
                    ),
                )
                .route(
                    "/ok",
                    get(|| async { Html("<h1 id=outcome>Thank you for your order</h1>") }),
                )
                .route(
                    "/failed",
                    get(|| async { Html("<h1 id=outcome>Payment failed</h1>") }),
                );
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            base: format!("http://merchant.example:{port}"),
            task,
        }
    }

    /// The example shop page embedding the cashier at `cashier_url`.
    pub fn shop(&self, cashier_url: &str) -> String {
        let encoded: String =
            url::form_urlencoded::byte_serialize(cashier_url.as_bytes()).collect();
        format!("{}/shop?cashier={encoded}", self.base)
    }

    /// The success page.
    pub fn ok(&self) -> String {
        format!("{}/ok", self.base)
    }

    /// The failure page.
    pub fn failed(&self) -> String {
        format!("{}/failed", self.base)
    }
}

impl Drop for MerchantSite {
    fn drop(&mut self) {
        self.task.abort();
    }
}
