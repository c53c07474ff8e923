//! A visitor of the hosted pages without a browser, for the HTTP tests of checkout, portal and
//! pay-now pages.

use reqwest::StatusCode;

/// A page visitor without a browser: follows no redirects, keeps no cookies.
pub struct Visitor {
    /// The HTTP client, for requests the helpers do not cover.
    pub client: reqwest::Client,
}

/// A page's answer.
pub struct Page {
    /// The status code.
    pub status: StatusCode,
    /// `Location`, on redirects.
    pub location: Option<String>,
    /// `Content-Security-Policy`.
    pub csp: String,
    /// The body.
    pub text: String,
}

impl Page {
    /// The form token on the page.
    pub fn csrf(&self) -> String {
        let start = self
            .text
            .find("name=\"csrfToken\" value=\"")
            .expect("a form")
            + 24;
        self.text[start..start + 64].to_string()
    }
}

impl Visitor {
    /// A visitor with no cookies that follows no redirects.
    pub fn new() -> Self {
        Self {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
        }
    }

    async fn answer(response: reqwest::Response) -> Page {
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_string())
        };
        let status = response.status();
        let location = header("location");
        let csp = header("content-security-policy").unwrap_or_default();
        Page {
            status,
            location,
            csp,
            text: response.text().await.unwrap(),
        }
    }

    /// GETs a page.
    pub async fn get(&self, url: &str) -> Page {
        Self::answer(self.client.get(url).send().await.unwrap()).await
    }

    /// Posts a form.
    pub async fn post(&self, url: &str, form: &[(&str, &str)]) -> Page {
        Self::answer(self.client.post(url).form(form).send().await.unwrap()).await
    }

    /// Posts the card form of the page at `url`.
    pub async fn pay(&self, url: &str, card: &str) -> Page {
        let csrf = self.get(url).await.csrf();
        self.post(
            url,
            &[
                ("csrfToken", csrf.as_str()),
                ("cardNumber", card),
                ("expiry", "12/34"),
                ("cvc", "123"),
                ("holder", "Ada Lovelace"),
            ],
        )
        .await
    }
}
