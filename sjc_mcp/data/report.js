(function(){
var D=JSON.parse(document.getElementById('sjc-data').textContent);
var sel={session:document.getElementById('f-session'),kind:document.getElementById('f-kind'),
  view:document.getElementById('f-view')};
var NS='http://www.w3.org/2000/svg';
function el(tag,attrs,text,ns){var e=ns?document.createElementNS(NS,tag):document.createElement(tag);
  for(var k in attrs){e.setAttribute(k,attrs[k]);} if(text!==undefined){e.textContent=text;} return e;}
function fmt(n){return Number(n).toLocaleString('en');}
function active(b){return (sel.session.value===''||b.s===sel.session.value)&&(sel.kind.value===''||b.k===sel.kind.value);}
var packed=null;
function kept(){if(packed){return packed;} var bin=atob(document.getElementById('sjc-kept').textContent.trim());
  var u=new Uint8Array(bin.length); for(var i=0;i<bin.length;i++){u[i]=bin.charCodeAt(i);}
  packed=new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream('gzip'))).text().then(JSON.parse);
  return packed;}
function keptBlock(i){var box=document.getElementById('kept-'+i); if(!box||box.dataset.done){return;}
  box.dataset.done='1';
  if(typeof DecompressionStream==='undefined'){box.appendChild(el('div',{'class':'cut'},
    'This browser cannot unpack the kept entries (no DecompressionStream).')); return;}
  kept().then(function(all){all[i].forEach(function(g){
    box.appendChild(el('div',{'class':'sec'},g[0]||'(no section)'));
    g[1].forEach(function(e){var d=el('div',{'class':'entry keep'}); var sc=e[1];
      d.appendChild(el('div',{'class':'why'},sc===null?'not judged (kept)':'score '+sc.toFixed(2)+(sc<D.threshold?
        ', within the margin below the threshold '+D.threshold+': kept, flagged':' ≥ threshold '+D.threshold)));
      d.appendChild(el('pre',{'class':'text'},e[0]));
      if(!e[2]){d.appendChild(el('div',{'class':'cut'},'… (the log keeps only the start)'));}
      box.appendChild(d);});});});}
function axes(svg,w,h,m,xt,yt,ymax,steps,yfmt){
  svg.appendChild(el('line',{x1:m.l,y1:h-m.b,x2:w-m.r,y2:h-m.b,stroke:'#333'},undefined,1));
  svg.appendChild(el('line',{x1:m.l,y1:m.t,x2:m.l,y2:h-m.b,stroke:'#333'},undefined,1));
  for(var i=0;i<=10;i+=2){var x=m.l+(w-m.l-m.r)*i/10;
    svg.appendChild(el('line',{x1:x,y1:h-m.b,x2:x,y2:h-m.b+4,stroke:'#333'},undefined,1));
    svg.appendChild(el('text',{x:x,y:h-m.b+15,'text-anchor':'middle'},(i/10).toFixed(1),1));}
  for(var j=0;j<=steps;j++){var y=h-m.b-(h-m.t-m.b)*j/steps;
    svg.appendChild(el('line',{x1:m.l-4,y1:y,x2:m.l,y2:y,stroke:'#333'},undefined,1));
    svg.appendChild(el('text',{x:m.l-6,y:y+4,'text-anchor':'end'},yfmt(ymax*j/steps),1));}
  svg.appendChild(el('text',{'class':'axis-title',x:m.l+(w-m.l-m.r)/2,y:h-4,'text-anchor':'middle'},xt,1));
  var t=el('text',{'class':'axis-title',x:12,y:m.t+(h-m.t-m.b)/2,'text-anchor':'middle',
    transform:'rotate(-90 12 '+(m.t+(h-m.t-m.b)/2)+')'},yt,1); svg.appendChild(t);}
function mark(svg,w,h,m,th,mg){var X=function(v){return m.l+(w-m.l-m.r)*v;};
  if(mg>0){svg.appendChild(el('rect',{'class':'margin-band',x:X(th-mg),y:m.t,width:X(th)-X(th-mg),
    height:h-m.t-m.b,fill:'#f5a623','fill-opacity':0.18},undefined,1));}
  svg.appendChild(el('line',{'class':'threshold',x1:X(th),y1:m.t-6,x2:X(th),y2:h-m.b,stroke:'#d62728',
    'stroke-width':2,'stroke-dasharray':'5 3'},undefined,1));
  svg.appendChild(el('text',{x:X(th)+4,y:m.t+4,fill:'#d62728'},'threshold '+th,1));}
function charts(scores){var th=D.threshold,mg=D.margin,w=480,h=240,m={l:52,r:16,t:22,b:42};
  var hs=document.getElementById('histogram'); while(hs.firstChild){hs.removeChild(hs.firstChild);}
  var bins=[]; for(var i=0;i<20;i++){bins.push(0);} scores.forEach(function(s){bins[Math.min(19,Math.floor(s*20))]++;});
  var top=Math.max.apply(null,bins)||1; var steps=Math.min(4,top); top=Math.ceil(top/steps)*steps;
  var bw=(w-m.l-m.r)/20;
  hs.appendChild(el('text',{x:m.l,y:12,'font-weight':'600'},'Judge scores ('+fmt(scores.length)+' entries)',1));
  bins.forEach(function(n,i){var bh=(h-m.t-m.b)*n/top; var r=el('rect',{'class':'bar',x:m.l+i*bw+1,y:h-m.b-bh,
    width:bw-2,height:bh,fill:(i+1)/20<=th-mg+1e-9?'#d9534f':'#4c78a8'},undefined,1);
    r.appendChild(el('title',{},(i/20).toFixed(2)+'–'+((i+1)/20).toFixed(2)+': '+n+' entries',1)); hs.appendChild(r);});
  axes(hs,w,h,m,'judge score (0 = no source, 1 = supported)','entries',top,steps,function(v){return Math.round(v);});
  mark(hs,w,h,m,th,mg);
  var cv=document.getElementById('curve'); while(cv.firstChild){cv.removeChild(cv.firstChild);}
  cv.appendChild(el('text',{x:m.l,y:12,'font-weight':'600'},'Share of entries pruned as the threshold moves',1));
  var n=scores.length||1, d='', pts=[];
  for(var k=0;k<=20;k++){var t=k/20; var f=scores.filter(function(s){return s<t-mg;}).length/n;
    var x=m.l+(w-m.l-m.r)*t, y=h-m.b-(h-m.t-m.b)*f; d+=(k?'L':'M')+x.toFixed(1)+','+y.toFixed(1); pts.push([x,y,t,f]);}
  axes(cv,w,h,m,'threshold','entries pruned (%)',1,4,function(v){return Math.round(v*100)+'%';});
  cv.appendChild(el('path',{d:d,fill:'none',stroke:'#e45756','stroke-width':2},undefined,1));
  pts.forEach(function(p){var c=el('circle',{'class':'point',cx:p[0],cy:p[1],r:2.5,fill:'#e45756'},undefined,1);
    c.appendChild(el('title',{},'threshold '+p[2].toFixed(2)+': '+Math.round(p[3]*100)+'% pruned',1)); cv.appendChild(c);});
  mark(cv,w,h,m,th,mg);}
function apply(){var t={n:0,enf:0,kept:0,pruned:0,cb:0,ca:0,tb:0,ta:0,sh:0,would:0,scb:0,sca:0}, scores=[];
  D.boundaries.forEach(function(b,i){var on=active(b); var node=document.getElementById('b-'+i);
    node.classList.toggle('hidden',!on); if(!on){return;} t.n++; scores.push.apply(scores,b.scores);
    if(b.k==='enforced'){t.enf++;t.kept+=b.kept;t.pruned+=b.pruned;t.cb+=b.cb;t.ca+=b.ca;t.tb+=b.tb;t.ta+=b.ta;}
    else if(b.k==='shadow'||b.k==='judge'){t.sh++;t.would+=b.pruned;t.scb+=b.cb;t.sca+=(b.cae===null?b.cb:b.cae);}
    var kd=node.querySelector('details.kept-toggle'); if(kd){kd.open=sel.view.value==='all';}});
  var T=document.getElementById('totals'); while(T.firstChild){T.removeChild(T.firstChild);}
  var p1=el('div',{}); p1.appendChild(el('b',{},fmt(t.n))); p1.appendChild(document.createTextNode((t.n===1?' boundary':' boundaries')+' shown. Enforced decisions (the latest per boundary): '));
  p1.appendChild(el('b',{id:'t-enforced'},fmt(t.enf))); p1.appendChild(document.createTextNode((t.enf===1?' boundary':' boundaries')+', pruned '));
  p1.appendChild(el('b',{id:'t-pruned'},fmt(t.pruned))); p1.appendChild(document.createTextNode(', kept '+fmt(t.kept)+
    ', characters '+fmt(t.cb)+' → '+fmt(t.ca)+', tokens '+fmt(t.tb)+' → '+fmt(t.ta)+' (estimated).')); T.appendChild(p1);
  var p2=el('div',{}); p2.appendChild(document.createTextNode('Shadow mode, replays and judge-only runs (nothing removed): '));
  p2.appendChild(el('b',{id:'t-shadow'},fmt(t.sh))); p2.appendChild(document.createTextNode((t.sh===1?' boundary':' boundaries')+', would prune '));
  p2.appendChild(el('b',{id:'t-would'},fmt(t.would))); p2.appendChild(document.createTextNode(' entries, characters '+
    fmt(t.scb)+' → '+fmt(t.sca)+'.')); T.appendChild(p2);
  charts(scores);
  var h=[]; if(sel.session.value){h.push('session='+encodeURIComponent(sel.session.value));}
  if(sel.kind.value){h.push('kind='+sel.kind.value);} if(sel.view.value==='all'){h.push('view=all');}
  var nh=h.join('&'); if(location.hash.replace(/^#/,'')!==nh){history.replaceState(null,'',nh?'#'+nh:location.pathname);}}
location.hash.replace(/^#/,'').split('&').forEach(function(kv){var p=kv.split('='); var v=decodeURIComponent(p[1]||'');
  if(sel[p[0]]&&Array.prototype.some.call(sel[p[0]].options,function(o){return o.value===v;})){sel[p[0]].value=v;}});
Object.keys(sel).forEach(function(k){sel[k].addEventListener('change',apply);});
document.querySelectorAll('details.kept-toggle').forEach(function(d){d.addEventListener('toggle',function(){
  if(d.open){keptBlock(d.dataset.i);}});});
apply();
})();
