import { useEffect } from 'preact/hooks';

/** The page's heading, and the document's title with it (what a screen reader and a tab list announce). */
export function PageTitle({ title }: { title: string }) {
  useEffect(() => {
    document.title = `${title} · Payment Service dashboard`;
  }, [title]);
  return <h1>{title}</h1>;
}
