//! A vector held in shared pieces: items behind `Arc`s in chunks, chunks in pages, each behind an
//! `Arc`, so that a clone costs a few pointers and a change copies only the page and the chunk it
//! touches (at most about `2 * PAGE` and `2 * CHUNK` pointers), whatever the length. The monitor
//! keeps the states of recent state frames this way: each differs from the last only where a frame
//! said, and at 10,000 items a frame must cost what it does at 100.

use std::sync::Arc;

/// Items per chunk, and chunks per page, as they are appended; an insertion splits a chunk (a
/// page) that grows past twice this.
const CHUNK: usize = 32;
const PAGE: usize = 32;

type Chunk<T> = Vec<Arc<T>>;

#[derive(Debug)]
struct Page<T> {
    /// Items in the page.
    len: usize,
    chunks: Arc<Vec<Arc<Chunk<T>>>>,
}

impl<T> Clone for Page<T> {
    fn clone(&self) -> Self {
        Page { len: self.len, chunks: Arc::clone(&self.chunks) }
    }
}

/// A vector whose clones share everything they did not change since.
#[derive(Debug)]
pub(crate) struct Pieces<T> {
    pages: Vec<Page<T>>,
    len: usize,
}

impl<T> Clone for Pieces<T> {
    fn clone(&self) -> Self {
        Pieces { pages: self.pages.clone(), len: self.len }
    }
}

impl<T> Default for Pieces<T> {
    fn default() -> Self {
        Pieces { pages: Vec::new(), len: 0 }
    }
}

/// Where an item is: its page, the chunk in the page, the offset in the chunk.
#[derive(Clone, Copy)]
struct At {
    page: usize,
    chunk: usize,
    offset: usize,
}

impl<T: Clone> Pieces<T> {
    /// Every item of `items`, in order.
    pub fn from_items<'a>(items: impl IntoIterator<Item = &'a T>) -> Self
    where
        T: 'a,
    {
        let mut pieces = Pieces::default();
        for item in items {
            pieces.push(item.clone());
        }
        pieces
    }

    /// How many items it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The item at `index`.
    pub fn get(&self, index: usize) -> Option<&T> {
        let at = self.locate(index)?;
        Some(&self.pages[at.page].chunks[at.chunk][at.offset])
    }

    /// Every item, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.pages.iter().flat_map(|p| p.chunks.iter()).flat_map(|c| c.iter()).map(|item| &**item)
    }

    /// Where the item at `index` is, looked for from the end: changes are mostly to the latest.
    fn locate(&self, index: usize) -> Option<At> {
        if index >= self.len {
            return None;
        }
        let mut end = self.len;
        for (p, page) in self.pages.iter().enumerate().rev() {
            let start = end - page.len;
            if index >= start {
                let mut chunk_end = end;
                for (c, chunk) in page.chunks.iter().enumerate().rev() {
                    let chunk_start = chunk_end - chunk.len();
                    if index >= chunk_start {
                        return Some(At { page: p, chunk: c, offset: index - chunk_start });
                    }
                    chunk_end = chunk_start;
                }
                return None;
            }
            end = start;
        }
        None
    }

    /// The chunk at `at`, this copy's own (copied if shared), with its page's chunk list.
    fn chunk_mut(&mut self, at: At) -> (&mut Vec<Arc<Chunk<T>>>, usize) {
        let chunks = Arc::make_mut(&mut self.pages[at.page].chunks);
        (chunks, at.chunk)
    }

    /// Replaces the item at `index`.
    pub fn set(&mut self, index: usize, item: T) -> bool {
        let Some(at) = self.locate(index) else { return false };
        let (chunks, c) = self.chunk_mut(at);
        Arc::make_mut(&mut chunks[c])[at.offset] = Arc::new(item);
        true
    }

    /// Appends `item`.
    pub fn push(&mut self, item: T) {
        let full_page = |p: &Page<T>| p.chunks.len() >= PAGE && p.chunks.last().is_none_or(|c| c.len() >= CHUNK);
        if self.pages.last().is_none_or(full_page) {
            self.pages.push(Page { len: 0, chunks: Arc::new(Vec::new()) });
        }
        let page = self.pages.last_mut().expect("a page was pushed above");
        let chunks = Arc::make_mut(&mut page.chunks);
        match chunks.last_mut() {
            Some(last) if last.len() < CHUNK => Arc::make_mut(last).push(Arc::new(item)),
            _ => chunks.push(Arc::new(vec![Arc::new(item)])),
        }
        page.len += 1;
        self.len += 1;
    }

    /// Inserts `item` at `index` (at most the length).
    pub fn insert(&mut self, index: usize, item: T) -> bool {
        if index == self.len {
            self.push(item);
            return true;
        }
        let Some(at) = self.locate(index) else { return false };
        let (chunks, c) = self.chunk_mut(at);
        let chunk = Arc::make_mut(&mut chunks[c]);
        chunk.insert(at.offset, Arc::new(item));
        if chunk.len() > 2 * CHUNK {
            let tail = chunk.split_off(CHUNK);
            chunks.insert(c + 1, Arc::new(tail));
        }
        let split = chunks.len() > 2 * PAGE;
        self.pages[at.page].len += 1;
        self.len += 1;
        if split {
            self.split_page(at.page);
        }
        true
    }

    /// Splits the page at `p` in two.
    fn split_page(&mut self, p: usize) {
        let page = &mut self.pages[p];
        let tail: Vec<Arc<Chunk<T>>> = Arc::make_mut(&mut page.chunks).split_off(PAGE);
        let moved: usize = tail.iter().map(|c| c.len()).sum();
        page.len -= moved;
        self.pages.insert(p + 1, Page { len: moved, chunks: Arc::new(tail) });
    }

    /// Removes the item at `index`.
    pub fn remove(&mut self, index: usize) -> bool {
        let Some(at) = self.locate(index) else { return false };
        let (chunks, c) = self.chunk_mut(at);
        let chunk = Arc::make_mut(&mut chunks[c]);
        chunk.remove(at.offset);
        if chunk.is_empty() {
            chunks.remove(c);
        }
        let empty = chunks.is_empty();
        self.pages[at.page].len -= 1;
        if empty {
            self.pages.remove(at.page);
        }
        self.len -= 1;
        true
    }

    /// Keeps the first `len` items.
    pub fn truncate(&mut self, len: usize) {
        while self.len > len {
            let excess = self.len - len;
            let Some(page) = self.pages.last_mut() else { break };
            if page.len <= excess {
                self.len -= page.len;
                self.pages.pop();
                continue;
            }
            let chunks = Arc::make_mut(&mut page.chunks);
            let Some(last) = chunks.last_mut() else { break };
            let cut = excess.min(last.len());
            if cut == last.len() {
                chunks.pop();
            } else {
                let keep = last.len() - cut;
                Arc::make_mut(last).truncate(keep);
            }
            page.len -= cut;
            self.len -= cut;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation agrees with a plain vector, through page and chunk splits, and a clone
    /// taken before the changes keeps what it had.
    #[test]
    fn pieces_are_a_vector() {
        let start: Vec<u32> = (0..3000).collect();
        let mut plain = start.clone();
        let mut pieces = Pieces::from_items(&start);
        let before = pieces.clone();
        let mut seed = 7u64;
        let mut next = |bound: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % bound.max(1)
        };
        for step in 0..20_000u32 {
            match next(6) {
                0 | 1 => {
                    let at = next(plain.len() + 1);
                    plain.insert(at, step);
                    assert!(pieces.insert(at, step));
                }
                2 if !plain.is_empty() => {
                    let at = next(plain.len());
                    plain.remove(at);
                    assert!(pieces.remove(at));
                }
                3 if !plain.is_empty() => {
                    let at = next(plain.len());
                    plain[at] = step;
                    assert!(pieces.set(at, step));
                }
                4 => {
                    plain.push(step);
                    pieces.push(step);
                }
                _ if step % 500 == 0 => {
                    let keep = next(plain.len() + 1);
                    plain.truncate(keep);
                    pieces.truncate(keep);
                }
                _ => {}
            }
            assert_eq!(pieces.len(), plain.len());
        }
        assert!(pieces.iter().eq(plain.iter()));
        for (i, item) in plain.iter().enumerate() {
            assert_eq!(pieces.get(i), Some(item));
        }
        assert_eq!(pieces.get(plain.len()), None);
        assert!(before.iter().eq(start.iter()), "a clone keeps its items");
    }
}
