/**
 * Ids sent as one comma-separated text (`array_to_string(ARRAY(…), ',')`), read into numbers
 * without a string per id: a text[] of 2,000,000 ids became 2,000,000 JavaScript strings on the
 * way, garbage that raised a pass's peak memory. Ids are positive bigints below 2^53 (identity
 * columns), so each is exact as a number.
 */
export function parseIdList(text: string | null): number[] {
  const ids: number[] = [];
  if (!text) return ids;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 44) {
      ids.push(n);
      n = 0;
    } else if (c >= 48 && c <= 57) n = n * 10 + (c - 48);
    else throw new Error(`id list: unexpected character ${JSON.stringify(text[i])} at ${i}`);
  }
  ids.push(n);
  return ids;
}
