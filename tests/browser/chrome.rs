//! A headless Chromium driven over WebDriver: starts its own chromedriver on a free port.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};

/// A desktop and a phone viewport.
pub const DESKTOP: (u32, u32) = (1280, 1000);
pub const PHONE: (u32, u32) = (390, 844);

/// One browser session and the chromedriver behind it.
pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium with a `width`×`height` window.
    pub async fn start((width, height): (u32, u32)) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver =
            Command::new(std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into()))
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver is installed (Debian package chromium-driver)");
        let url = format!("http://127.0.0.1:{port}");
        // Wait for chromedriver to accept connections (bounded).
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                    "--hide-scrollbars", format!("--window-size={width},{height}"),
                    // Merchant return links resolve to this machine, where nothing listens on
                    // 443: the browser lands on the link at once, without a DNS lookup.
                    "--host-resolver-rules=MAP merchant.example 127.0.0.1",
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&url)
            .await
            .expect("a Chromium session starts");
        Self {
            client,
            driver,
            _profile: profile,
        }
    }

    /// Opens `url`.
    pub async fn open(&self, url: &str) {
        self.client.goto(url).await.expect("navigate");
    }

    /// The text of the first element matching `css`.
    pub async fn text(&self, css: &str) -> String {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("{css} on the page"))
            .text()
            .await
            .unwrap()
    }

    /// Types `text` into the field matching `css`.
    pub async fn fill(&self, css: &str, text: &str) {
        let field = self
            .client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("{css} on the page"));
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    /// Chooses the option `value` of the `<select>` matching `css`.
    pub async fn select(&self, css: &str, value: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("{css} on the page"))
            .select_by_value(value)
            .await
            .unwrap_or_else(|e| panic!("{value} in {css}: {e}"));
    }

    /// Clicks the first element matching `css`.
    pub async fn click(&self, css: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("{css} on the page"))
            .click()
            .await
            .unwrap();
    }

    /// Waits (at most 15 s) until an element matches `css`.
    pub async fn wait_for(&self, css: &str) {
        if let Err(e) = self
            .client
            .wait()
            .at_most(Duration::from_secs(15))
            .for_element(Locator::Css(css))
            .await
        {
            let page = self.page_text().await;
            panic!("{css} never appeared: {e}; the page reads: {page}");
        }
    }

    /// The visible text of the page, for a failure's message.
    async fn page_text(&self) -> String {
        match self.client.find(Locator::Css("body")).await {
            Ok(body) => body.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Waits (at most 15 s) until the browser is at `url`.
    pub async fn wait_for_url(&self, url: &str) {
        let url = url::Url::parse(url).unwrap();
        if let Err(e) = self
            .client
            .wait()
            .at_most(Duration::from_secs(15))
            .for_url(url.clone())
            .await
        {
            let now = self.client.current_url().await.unwrap();
            let page = self.page_text().await;
            panic!("never reached {url} (at {now}): {e}; the page reads: {page}");
        }
    }

    /// The page's address.
    pub async fn url(&self) -> String {
        self.client.current_url().await.unwrap().to_string()
    }

    /// Whether the first element matching `css` is shown.
    pub async fn visible(&self, css: &str) -> bool {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("{css} on the page"))
            .is_displayed()
            .await
            .unwrap()
    }

    /// How many elements match `css`.
    pub async fn count(&self, css: &str) -> usize {
        self.client.find_all(Locator::Css(css)).await.unwrap().len()
    }

    /// Saves a PNG of the viewport as `<target>/screenshots/<name>.png`.
    pub async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.expect("screenshot");
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// Ends the session and chromedriver.
    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// `<target>/screenshots`.
pub fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("screenshots")
}
