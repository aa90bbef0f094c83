import { useState } from "react";
import { useToolOutput } from "./host";
import type { Book, ListBooksOutput } from "./tools.gen";

function isPicks(value: unknown): value is ListBooksOutput {
  return typeof value === "object" && value !== null && Array.isArray((value as ListBooksOutput).books);
}

export function BookList() {
  const { output, status, error } = useToolOutput(isPicks);
  // Votes live in React state: a hot update of this file keeps them.
  const [votes, setVotes] = useState<Record<string, number>>({});
  const books = output?.books ?? [];
  const vote = (book: Book) => setVotes((current) => ({ ...current, [book.title]: (current[book.title] ?? 0) + 1 }));

  return (
    <main className="picks">
      <header>
        <h1>Book club picks</h1>
        {output && <span className="count">{books.length === 1 ? "1 book" : `${books.length} books`}</span>}
      </header>
      {status === "failed" && <p className="note">Could not reach the host: {error}</p>}
      {!output && status !== "failed" && <p className="note">Loading the picks…</p>}
      {output && books.length === 0 && <p className="note">No picks yet.</p>}
      <ol>
        {books.map((book, index) => (
          <li key={book.title}>
            <span className="rank">{index + 1}</span>
            <div className="text">
              <div className="title">{book.title}</div>
              <div className="author">by {book.author}</div>
            </div>
            <button
              type="button"
              className={votes[book.title] ? "vote voted" : "vote"}
              onClick={() => vote(book)}
              aria-label={`Vote for ${book.title}`}
            >
              <span aria-hidden="true">▲</span> {votes[book.title] ?? 0}
            </button>
          </li>
        ))}
      </ol>
    </main>
  );
}
