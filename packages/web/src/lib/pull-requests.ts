/**
 * The page of the pull request a commit opened (`create_pr=1`): the API answers its address as
 * `pullRequestUrl`, ending in `/discussions/{num}`, on the hub's public URL; the page is taken on this site's own
 * address for the repository (`repoHref`: `/alice/gpt`). An address that does not end so gives the list.
 */
export function pullRequestPage(repoHref: string, pullRequestUrl: string): string {
  const num = /\/discussions\/([1-9][0-9]*)\/?$/.exec(pullRequestUrl)?.[1];
  return num ? `${repoHref}/discussions/${num}` : `${repoHref}/discussions`;
}
