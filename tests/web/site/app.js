// Builds the page from /app/entries.json, as a single-page app does.
function build(data) {
  const root = document.getElementById("app");
  const article = document.createElement("article");
  const heading = document.createElement("h1");
  heading.textContent = data.title;
  article.appendChild(heading);
  for (const text of data.paragraphs) {
    const paragraph = document.createElement("p");
    paragraph.textContent = text;
    article.appendChild(paragraph);
  }
  root.appendChild(article);
  document.title = data.title;
}
fetch("/app/entries.json").then((r) => r.json()).then(build);
